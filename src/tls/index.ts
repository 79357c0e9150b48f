export {
  type ConfigKeys,
  type TlsMaterial,
  loadTlsMaterial,
  minimumTlsVersion,
  sameTlsMaterial,
  secureContextOptions,
  tls12CipherSuites,
  tls13CipherSuites,
} from './material';
export { TlsMaterialWatcher, type TlsMaterialWatcherOptions } from './watcher';
export { type OrganizationCaMatch, describeDedicatedCaViolation, findOrganizationCAs } from './dedicated-ca';
export { type CertificateSummary, oneLineName, summarisePem } from './pem';
