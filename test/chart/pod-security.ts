/**
 * Kubernetes Pod Security Standards, as the PodSecurity admission controller checks a pod
 * (kubernetes.io/docs/concepts/security/pod-security-standards, policy version "latest" of
 * Kubernetes 1.33; k8s.io/pod-security-admission/policy): every control of the baseline level and
 * those the restricted level adds. A double of the admission check, written from that document: a
 * violation names the control and the field, as `kubectl` prints them ("violates PodSecurity
 * "restricted:latest": allowPrivilegeEscalation != false (container "x" must set ...)").
 *
 * Scope: pod specs (a Pod's spec, or a workload's pod template spec). Windows-only fields are
 * checked only where the standard checks them on every pod (hostProcess).
 */

export type Level = 'baseline' | 'restricted';

export interface Violation {
  level: Level;
  /** The control's name, as the standard's table names it. */
  control: string;
  /** Where: `spec.containers[fabric-ops].securityContext.allowPrivilegeEscalation`. */
  field: string;
  message: string;
}

type Obj = Record<string, unknown>;

function isMap(value: unknown): value is Obj {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function map(value: unknown): Obj {
  return isMap(value) ? value : {};
}

function list(value: unknown): Obj[] {
  return Array.isArray(value) ? value.filter(isMap) : [];
}

interface Named {
  kind: 'containers' | 'initContainers' | 'ephemeralContainers';
  container: Obj;
  at: string;
}

function allContainers(spec: Obj): Named[] {
  const kinds = ['initContainers', 'containers', 'ephemeralContainers'] as const;
  return kinds.flatMap((kind) =>
    list(spec[kind]).map((container) => ({ kind, container, at: `spec.${kind}[${typeof container.name === 'string' ? container.name : '?'}]` })),
  );
}

/** The baseline level's capabilities that may be added (every other one is refused). */
export const baselineCapabilities: readonly string[] = [
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
];

/** The sysctls the baseline level allows ("safe" sysctls). */
export const safeSysctls: readonly string[] = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];

/** The volume types the restricted level allows. */
export const restrictedVolumeTypes: readonly string[] = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
];

const seLinuxTypes = ['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'];

/** Baseline violations of a pod spec (and its metadata's annotations, for AppArmor). */
export function baselineViolations(spec: Obj, annotations: Record<string, string> = {}): Violation[] {
  const out: Violation[] = [];
  const add = (control: string, field: string, message: string): void => {
    out.push({ level: 'baseline', control, field, message });
  };
  const podContext = map(spec.securityContext);
  const containers = allContainers(spec);

  if (map(podContext.windowsOptions).hostProcess === true) add('HostProcess', 'spec.securityContext.windowsOptions.hostProcess', 'must be unset or false');
  for (const { container, at } of containers) {
    if (map(map(container.securityContext).windowsOptions).hostProcess === true) {
      add('HostProcess', `${at}.securityContext.windowsOptions.hostProcess`, 'must be unset or false');
    }
  }
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC']) {
    if (spec[field] === true) add('Host Namespaces', `spec.${field}`, 'must be unset or false');
  }
  for (const { container, at } of containers) {
    const context = map(container.securityContext);
    if (context.privileged === true) add('Privileged Containers', `${at}.securityContext.privileged`, 'must be unset or false');
    const added = Array.isArray(map(context.capabilities).add) ? (map(context.capabilities).add as unknown[]) : [];
    for (const capability of added) {
      if (!baselineCapabilities.includes(String(capability))) {
        add('Capabilities', `${at}.securityContext.capabilities.add`, `adds ${String(capability)}, which is not one of ${baselineCapabilities.join(', ')}`);
      }
    }
    for (const port of list(container.ports)) {
      if (port.hostPort !== undefined && port.hostPort !== 0)
        add('HostPorts', `${at}.ports[${String(port.name ?? port.containerPort)}].hostPort`, 'must be unset or 0');
    }
    if (context.procMount !== undefined && context.procMount !== 'Default')
      add('/proc Mount Type', `${at}.securityContext.procMount`, 'must be unset or Default');
  }
  for (const volume of list(spec.volumes)) {
    if (volume.hostPath !== undefined) add('HostPath Volumes', `spec.volumes[${String(volume.name)}].hostPath`, 'must be unset');
  }

  // AppArmor: the field and the (deprecated) annotations.
  const appArmorOk = (type: unknown): boolean => type === undefined || type === 'RuntimeDefault' || type === 'Localhost';
  if (!appArmorOk(map(podContext.appArmorProfile).type))
    add('AppArmor', 'spec.securityContext.appArmorProfile.type', 'must be unset, RuntimeDefault or Localhost');
  for (const { container, at } of containers) {
    if (!appArmorOk(map(map(container.securityContext).appArmorProfile).type)) {
      add('AppArmor', `${at}.securityContext.appArmorProfile.type`, 'must be unset, RuntimeDefault or Localhost');
    }
  }
  for (const [key, value] of Object.entries(annotations)) {
    if (key.startsWith('container.apparmor.security.beta.kubernetes.io/') && value !== 'runtime/default' && !value.startsWith('localhost/')) {
      add('AppArmor', `metadata.annotations[${key}]`, 'must be unset, runtime/default or localhost/*');
    }
  }

  // SELinux: type from a fixed set, user and role unset.
  const seLinux = (options: Obj, at: string): void => {
    if (options.type !== undefined && !(typeof options.type === 'string' && seLinuxTypes.includes(options.type)))
      add('SELinux', `${at}.type`, `must be unset or one of ${seLinuxTypes.slice(1).join(', ')}`);
    for (const field of ['user', 'role']) if (options[field] !== undefined && options[field] !== '') add('SELinux', `${at}.${field}`, 'must be unset');
  };
  seLinux(map(podContext.seLinuxOptions), 'spec.securityContext.seLinuxOptions');
  for (const { container, at } of containers) seLinux(map(map(container.securityContext).seLinuxOptions), `${at}.securityContext.seLinuxOptions`);

  // Seccomp: not Unconfined, anywhere.
  if (map(podContext.seccompProfile).type === 'Unconfined') add('Seccomp', 'spec.securityContext.seccompProfile.type', 'must not be Unconfined');
  for (const { container, at } of containers) {
    if (map(map(container.securityContext).seccompProfile).type === 'Unconfined')
      add('Seccomp', `${at}.securityContext.seccompProfile.type`, 'must not be Unconfined');
  }

  for (const sysctl of list(podContext.sysctls)) {
    if (!safeSysctls.includes(String(sysctl.name))) add('Sysctls', `spec.securityContext.sysctls[${String(sysctl.name)}]`, 'is not a safe sysctl');
  }
  return out;
}

/** Restricted violations: the baseline's, and the restricted level's own controls. */
export function restrictedViolations(spec: Obj, annotations: Record<string, string> = {}): Violation[] {
  const out: Violation[] = baselineViolations(spec, annotations).map((violation) => ({ ...violation }));
  const add = (control: string, field: string, message: string): void => {
    out.push({ level: 'restricted', control, field, message });
  };
  const podContext = map(spec.securityContext);
  const containers = allContainers(spec);

  for (const volume of list(spec.volumes)) {
    const types = Object.keys(volume).filter((key) => key !== 'name');
    for (const type of types) {
      if (!restrictedVolumeTypes.includes(type))
        add('Volume Types', `spec.volumes[${String(volume.name)}].${type}`, `is not one of ${restrictedVolumeTypes.join(', ')}`);
    }
  }

  for (const { container, at } of containers) {
    const context = map(container.securityContext);
    if (context.allowPrivilegeEscalation !== false) add('Privilege Escalation', `${at}.securityContext.allowPrivilegeEscalation`, 'must be false');
  }

  // Running as non-root: the pod's runAsNonRoot true (and no container false), or each container's true.
  const podNonRoot = podContext.runAsNonRoot;
  if (podNonRoot === false) add('Running as Non-root', 'spec.securityContext.runAsNonRoot', 'must not be false');
  for (const { container, at } of containers) {
    const own = map(container.securityContext).runAsNonRoot;
    if (own === false) add('Running as Non-root', `${at}.securityContext.runAsNonRoot`, 'must not be false');
    else if (own !== true && podNonRoot !== true)
      add('Running as Non-root', `${at}.securityContext.runAsNonRoot`, 'must be true (on the container or on the pod)');
  }

  if (podContext.runAsUser === 0) add('Running as Non-root user', 'spec.securityContext.runAsUser', 'must not be 0');
  for (const { container, at } of containers) {
    if (map(container.securityContext).runAsUser === 0) add('Running as Non-root user', `${at}.securityContext.runAsUser`, 'must not be 0');
  }

  // Seccomp: RuntimeDefault or Localhost, on the pod or on every container.
  const seccompOk = (type: unknown): boolean => type === 'RuntimeDefault' || type === 'Localhost';
  const podSeccomp = map(podContext.seccompProfile).type;
  if (podSeccomp !== undefined && !seccompOk(podSeccomp)) add('Seccomp', 'spec.securityContext.seccompProfile.type', 'must be RuntimeDefault or Localhost');
  for (const { container, at } of containers) {
    const own = map(map(container.securityContext).seccompProfile).type;
    if (own !== undefined ? !seccompOk(own) : !seccompOk(podSeccomp)) {
      add('Seccomp', `${at}.securityContext.seccompProfile.type`, 'must be RuntimeDefault or Localhost (on the container or on the pod)');
    }
  }

  // Capabilities: drop ALL; add nothing but NET_BIND_SERVICE. (Ephemeral containers are checked too.)
  for (const { container, at } of containers) {
    const capabilities = map(map(container.securityContext).capabilities);
    const drop = Array.isArray(capabilities.drop) ? capabilities.drop.map(String) : [];
    if (!drop.includes('ALL')) add('Capabilities', `${at}.securityContext.capabilities.drop`, 'must include ALL');
    const added = Array.isArray(capabilities.add) ? capabilities.add.map(String) : [];
    for (const capability of added) {
      if (capability !== 'NET_BIND_SERVICE')
        add('Capabilities', `${at}.securityContext.capabilities.add`, `adds ${capability}: only NET_BIND_SERVICE may be added`);
    }
  }
  return out;
}

/** One line per violation, for test messages. */
export function describeViolations(violations: readonly Violation[]): string[] {
  return violations.map((violation) => `${violation.level}: ${violation.control}: ${violation.field} ${violation.message}`);
}
