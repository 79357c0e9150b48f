/*
 * statsd 0.9.0 logs with util.log, which Node 23 removed. Preloaded with `node -r` so the
 * daemon runs on the Node 24 we ship and test with; on older Node it changes nothing.
 */
'use strict';
const util = require('util');

if (typeof util.log !== 'function') {
  util.log = function log(...args) {
    process.stdout.write(`${new Date().toISOString()} - ${util.format(...args)}\n`);
  };
}
