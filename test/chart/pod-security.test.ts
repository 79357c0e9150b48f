import { baselineViolations, describeViolations, restrictedViolations } from './pod-security';

/**
 * The Pod Security double (test/chart/pod-security.ts) against the statements of the Pod Security
 * Standards: what each level allows and refuses, pod-level settings covering containers, and the
 * deployers' own pods (fabric-operator's peer container passes restricted, its root init container
 * does not; the hlf-peer chart's peer container passes neither level's stricter rules).
 */

const hardened = {
  runAsNonRoot: true,
  readOnlyRootFilesystem: true,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

function pod(containers: Record<string, unknown>[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { containers, ...extra };
}

test('a hardened container passes restricted, with no pod-level context', () => {
  expect(restrictedViolations(pod([{ name: 'app', image: 'x', securityContext: hardened }], { volumes: [{ name: 'd', emptyDir: {} }] }))).toEqual([]);
});

test("the pod's runAsNonRoot and seccomp profile cover containers that set neither; a container's own false or Unconfined does not pass", () => {
  const covered = pod([{ name: 'app', image: 'x', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }], {
    securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  });
  expect(restrictedViolations(covered)).toEqual([]);
  const overridden = pod([{ name: 'app', image: 'x', securityContext: { ...hardened, runAsNonRoot: false, seccompProfile: { type: 'Unconfined' } } }], {
    securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  });
  expect(describeViolations(restrictedViolations(overridden))).toEqual([
    'baseline: Seccomp: spec.containers[app].securityContext.seccompProfile.type must not be Unconfined',
    'restricted: Running as Non-root: spec.containers[app].securityContext.runAsNonRoot must not be false',
    'restricted: Seccomp: spec.containers[app].securityContext.seccompProfile.type must be RuntimeDefault or Localhost (on the container or on the pod)',
  ]);
});

test("fabric-operator's peer pod: the peer container passes restricted (NET_BIND_SERVICE may be added), the root init container does not", () => {
  const spec = pod(
    [
      {
        name: 'peer',
        image: 'x',
        securityContext: {
          ...hardened,
          readOnlyRootFilesystem: false,
          privileged: false,
          capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
          runAsUser: 7051,
        },
      },
    ],
    {
      securityContext: { fsGroup: 2000, runAsGroup: 1000, runAsNonRoot: true, runAsUser: 1000 },
      initContainers: [
        {
          name: 'init',
          image: 'x',
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: { add: ['CHOWN', 'FOWNER'], drop: ['ALL'] },
            privileged: false,
            runAsNonRoot: false,
            runAsUser: 0,
          },
        },
      ],
    },
  );
  expect(baselineViolations(spec)).toEqual([]);
  expect(describeViolations(restrictedViolations(spec))).toEqual([
    'restricted: Running as Non-root: spec.initContainers[init].securityContext.runAsNonRoot must not be false',
    'restricted: Running as Non-root user: spec.initContainers[init].securityContext.runAsUser must not be 0',
    'restricted: Seccomp: spec.initContainers[init].securityContext.seccompProfile.type must be RuntimeDefault or Localhost (on the container or on the pod)',
    'restricted: Capabilities: spec.initContainers[init].securityContext.capabilities.add adds CHOWN: only NET_BIND_SERVICE may be added',
    'restricted: Capabilities: spec.initContainers[init].securityContext.capabilities.add adds FOWNER: only NET_BIND_SERVICE may be added',
  ]);
});

test("the hlf-peer chart's pod (no security context, the Docker socket): baseline refuses the hostPath, restricted the rest", () => {
  const spec = pod([{ name: 'peer', image: 'x' }], {
    volumes: [
      { name: 'dockersocket', hostPath: { path: '/var/run/docker.sock' } },
      { name: 'data', persistentVolumeClaim: { claimName: 'd' } },
    ],
  });
  expect(describeViolations(baselineViolations(spec))).toEqual(['baseline: HostPath Volumes: spec.volumes[dockersocket].hostPath must be unset']);
  expect(describeViolations(restrictedViolations(spec))).toEqual([
    'baseline: HostPath Volumes: spec.volumes[dockersocket].hostPath must be unset',
    'restricted: Volume Types: spec.volumes[dockersocket].hostPath is not one of configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected, secret',
    'restricted: Privilege Escalation: spec.containers[peer].securityContext.allowPrivilegeEscalation must be false',
    'restricted: Running as Non-root: spec.containers[peer].securityContext.runAsNonRoot must be true (on the container or on the pod)',
    'restricted: Seccomp: spec.containers[peer].securityContext.seccompProfile.type must be RuntimeDefault or Localhost (on the container or on the pod)',
    'restricted: Capabilities: spec.containers[peer].securityContext.capabilities.drop must include ALL',
  ]);
});

test('baseline: host namespaces, privileged, added capabilities outside its list, host ports, /proc, SELinux, AppArmor and unsafe sysctls', () => {
  const spec = pod(
    [
      {
        name: 'app',
        image: 'x',
        ports: [{ name: 'http', containerPort: 80, hostPort: 80 }],
        securityContext: {
          privileged: true,
          capabilities: { add: ['NET_ADMIN', 'KILL'] },
          procMount: 'Unmasked',
          seLinuxOptions: { type: 'spc_t', user: 'root' },
          appArmorProfile: { type: 'Unconfined' },
        },
      },
    ],
    {
      hostNetwork: true,
      hostPID: false,
      securityContext: {
        sysctls: [
          { name: 'net.ipv4.tcp_syncookies', value: '1' },
          { name: 'kernel.msgmax', value: '1' },
        ],
      },
    },
  );
  expect(describeViolations(baselineViolations(spec, { 'container.apparmor.security.beta.kubernetes.io/app': 'unconfined' }))).toEqual([
    'baseline: Host Namespaces: spec.hostNetwork must be unset or false',
    'baseline: Privileged Containers: spec.containers[app].securityContext.privileged must be unset or false',
    'baseline: Capabilities: spec.containers[app].securityContext.capabilities.add adds NET_ADMIN, which is not one of AUDIT_WRITE, CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, MKNOD, NET_BIND_SERVICE, SETFCAP, SETGID, SETPCAP, SETUID, SYS_CHROOT',
    'baseline: HostPorts: spec.containers[app].ports[http].hostPort must be unset or 0',
    'baseline: /proc Mount Type: spec.containers[app].securityContext.procMount must be unset or Default',
    'baseline: AppArmor: spec.containers[app].securityContext.appArmorProfile.type must be unset, RuntimeDefault or Localhost',
    'baseline: AppArmor: metadata.annotations[container.apparmor.security.beta.kubernetes.io/app] must be unset, runtime/default or localhost/*',
    'baseline: SELinux: spec.containers[app].securityContext.seLinuxOptions.type must be unset or one of container_t, container_init_t, container_kvm_t, container_engine_t',
    'baseline: SELinux: spec.containers[app].securityContext.seLinuxOptions.user must be unset',
    'baseline: Sysctls: spec.securityContext.sysctls[kernel.msgmax] is not a safe sysctl',
  ]);
});

test('restricted refuses a volume type baseline allows (nfs); both allow a projected token', () => {
  const spec = pod([{ name: 'app', image: 'x', securityContext: hardened }], {
    volumes: [
      { name: 'shared', nfs: { server: 'nfs.example', path: '/x' } },
      { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } },
    ],
  });
  expect(baselineViolations(spec)).toEqual([]);
  expect(describeViolations(restrictedViolations(spec))).toEqual([
    'restricted: Volume Types: spec.volumes[shared].nfs is not one of configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected, secret',
  ]);
});
