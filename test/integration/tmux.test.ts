import { TmuxBackend } from '../../src/core/mux/tmux';
import { muxContract } from './muxContract';

let n = 0;
muxContract('tmux', async () => {
  const mux = new TmuxBackend({ server: `mam-test-${process.pid}-${n++}` });
  return { mux, dispose: () => mux.killServer() };
});
