// Stand-in for the `debug` package in the lean `mam event` bundle: mqtt-packet only calls it to
// trace, and loading the real one (with supports-color) costs more than it is worth there.
'use strict';
module.exports = function createDebug() {
  const log = function () {};
  log.enabled = false;
  return log;
};
