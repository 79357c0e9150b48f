/*
 * StatsD daemon of docker-compose.yml (the reference daemon, npm `statsd`), mounted at
 * /etc/statsd/config.js. fabric-ops-statsd pushes to 127.0.0.1:8125 over UDP.
 */
({
  servers: [{ server: './servers/udp', address: '127.0.0.1', port: 8125 }],
  // The management console: `echo gauges | nc 127.0.0.1 8126` lists what arrived.
  mgmt_address: '127.0.0.1',
  mgmt_port: 8126,
  // Print every line received (`docker compose logs statsd`); no backend forwards them.
  dumpMessages: true,
  backends: [],
  flushInterval: 10000,
});
