/** The operations server's limits, as Fabric's Go server has them where it has one. */

/** Headers and body within 10 s (Go: ReadTimeout / ReadHeaderTimeout); the TLS handshake gets the same. */
export const readTimeoutMs = 10_000;
/** Idle keep-alive connections are closed after 5 s. */
export const keepAliveTimeoutMs = 5_000;
/** A response not started within 2 min is given up (503). */
export const responseTimeoutMs = 2 * 60 * 1000;
/** Request bodies (PUT /logspec) over this are refused with 413. */
export const maxBodyBytes = 16 * 1024;
/** Default of operations.maxConnections / Operations.MaxConnections. */
export const defaultMaxConnections = 1024;
