import type convict from 'convict';
import type { DialectDefinition } from './dialect';
import { booleanSetting, listSetting, stringSetting } from './settings';

/** The sections of an orderer's `orderer.yaml` that fabric-ops reads; every other key is ignored. */
export interface OrdererSettings {
  Operations: {
    ListenAddress: string;
    MaxConnections: string;
    TLS: {
      Enabled: boolean;
      Certificate: string;
      PrivateKey: string;
      ClientAuthRequired: boolean;
      ClientRootCAs: string[];
      RequireDedicatedCA: boolean;
    };
    HealthCheck: {
      Timeout: string;
      ContainerRuntime: { Type: string; Endpoint: string; RequiredConditions: string[] };
    };
  };
  Metrics: {
    Provider: string;
    Statsd: { Network: string; Address: string; WriteInterval: string; Prefix: string };
  };
  General: {
    TLS: { RootCAs: string[]; ClientRootCAs: string[] };
    LocalMSPDir: string;
  };
}

/** Defaults are those of Fabric's sample orderer.yaml (reference-behaviour.md), plus fabric-ops' own keys. */
export const ordererSchema: convict.Schema<OrdererSettings> = {
  Operations: {
    ListenAddress: stringSetting('127.0.0.1:8443', 'host:port of the operations server; ":port" listens on every interface, port 0 picks a free port'),
    MaxConnections: stringSetting('1024', 'fabric-ops: connections the operations server keeps open at once (a whole number, 1 to 1000000); more are closed as soon as they are accepted, without an answer, and counted in `operations_connections_refused`'),
    TLS: {
      Enabled: booleanSetting(false, 'serve the operations API over TLS'),
      Certificate: stringSetting('', 'PEM server certificate (relative paths: against the directory of orderer.yaml)'),
      PrivateKey: stringSetting('', 'PEM server private key'),
      ClientAuthRequired: booleanSetting(false, 'demand a valid client certificate in the TLS handshake on every path, /healthz included'),
      ClientRootCAs: listSetting([], 'PEM CA certificates trusted for client certificates'),
      RequireDedicatedCA: booleanSetting(false, 'fabric-ops: refuse to start (instead of warning) when the server certificate chains to an organization CA'),
    },
    HealthCheck: {
      Timeout: stringSetting('2s', 'fabric-ops: timeout of each health checker (Go duration)'),
      ContainerRuntime: {
        Type: stringSetting('', 'fabric-ops: docker, cri, auto or none; empty: none'),
        Endpoint: stringSetting('', 'fabric-ops: unix:///path, /path or (docker) tcp://host:port; empty: the runtime type\'s usual socket'),
        RequiredConditions: listSetting(['RuntimeReady', 'NetworkReady'], 'fabric-ops: CRI conditions that must be true'),
      },
    },
  },
  Metrics: {
    Provider: stringSetting('disabled', 'prometheus, statsd or disabled'),
    Statsd: {
      Network: stringSetting('udp', 'tcp or udp'),
      Address: stringSetting('127.0.0.1:8125', 'host:port of the StatsD daemon'),
      WriteInterval: stringSetting('30s', 'how often metrics are pushed (Go duration)'),
      Prefix: stringSetting('', 'prepended to every metric name'),
    },
  },
  General: {
    TLS: {
      RootCAs: listSetting([], 'organization TLS root CAs (dedicated-CA rule)'),
      ClientRootCAs: listSetting([], 'organization client CAs (dedicated-CA rule)'),
    },
    LocalMSPDir: stringSetting('', 'local MSP directory; its cacerts/ and tlscacerts/ are organization CAs (dedicated-CA rule)'),
  },
};

export const ordererDialect: DialectDefinition = {
  dialect: 'orderer',
  fileName: 'orderer.yaml',
  envPrefix: 'ORDERER',
  schema: ordererSchema,
  topLevelKeys: ['General', 'Operations', 'Metrics', 'FileLedger', 'Consensus', 'Admin', 'ChannelParticipation'],
  keys: {
    listenAddress: 'Operations.ListenAddress',
    maxConnections: 'Operations.MaxConnections',
    tlsEnabled: 'Operations.TLS.Enabled',
    tlsCertFile: 'Operations.TLS.Certificate',
    tlsKeyFile: 'Operations.TLS.PrivateKey',
    tlsClientRootCAs: 'Operations.TLS.ClientRootCAs',
    tlsClientAuthRequired: 'Operations.TLS.ClientAuthRequired',
    tlsRequireDedicatedCA: 'Operations.TLS.RequireDedicatedCA',
    metricsProvider: 'Metrics.Provider',
    statsdNetwork: 'Metrics.Statsd.Network',
    statsdAddress: 'Metrics.Statsd.Address',
    statsdWriteInterval: 'Metrics.Statsd.WriteInterval',
    statsdPrefix: 'Metrics.Statsd.Prefix',
    healthTimeout: 'Operations.HealthCheck.Timeout',
    containerRuntimeType: 'Operations.HealthCheck.ContainerRuntime.Type',
    containerRuntimeEndpoint: 'Operations.HealthCheck.ContainerRuntime.Endpoint',
    containerRuntimeRequiredConditions: 'Operations.HealthCheck.ContainerRuntime.RequiredConditions',
  },
  organizationCAFileKeys: ['General.TLS.RootCAs', 'General.TLS.ClientRootCAs'],
  mspDirKey: 'General.LocalMSPDir',
  docker: null,
};
