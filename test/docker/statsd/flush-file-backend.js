/*
 * A StatsD backend for tests: appends each flush as one JSON line to config.flushFile,
 * tagged with config.generation (which daemon run it came from). Used by
 * test/support/statsd-daemon.ts and by the fabric-ops/statsd-test image.
 */
'use strict';
const fs = require('fs');

exports.init = function init(startupTime, config, events) {
  const file = config.flushFile;
  if (!file) return false;
  events.on('flush', function onFlush(timestamp, metrics) {
    const record = {
      generation: config.generation || 0,
      timestamp: timestamp,
      counters: metrics.counters,
      gauges: metrics.gauges,
      timers: metrics.timers,
      timerCounters: metrics.timer_counters,
    };
    fs.appendFileSync(file, JSON.stringify(record) + '\n');
  });
  return true;
};
