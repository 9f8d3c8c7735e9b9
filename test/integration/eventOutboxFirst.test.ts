import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { newJobId } from '../../src/core/base/ids';
import { RemainingLength } from '../../src/core/messaging/mqttWire';
import { verifySignature, type EventPayload } from '../../src/core/messaging/protocol';
import { writeJobToken } from '../../src/core/store/jobToken';
import { spawn } from 'node:child_process';
import { CLI, controlPlane, jobRecord, mam, tempDir } from '../support/helpers';

interface Answers {
  connack: number;
  puback: boolean;
  /** PUBACK only once this has settled. */
  pubackAfter?: Promise<void>;
}

interface Received {
  /** What the job's outbox held when the PUBLISH arrived, before the broker answered it. */
  outboxThen: string;
  payload: EventPayload;
}

/**
 * A broker of the test's own on loopback (plain MQTT 3.1.1, the few packets `mam event` sends): it
 * answers CONNECT with `connack` (a return code), and each PUBLISH — after reading the job's outbox
 * as it is at that moment — with a PUBACK, unless told to stay silent.
 */
async function fakeBroker(outbox: string, answers: Answers): Promise<{ port: number; received: Received[]; connects: number; close(): Promise<void> }> {
  const received: Received[] = [];
  const sockets = new Set<net.Socket>();
  const state = { connects: 0 };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (buffer.length < 2) return;
        const length = new RemainingLength();
        let i = 1;
        let read: string = 'more';
        while (read === 'more' && i < buffer.length) read = length.push(buffer[i++]!);
        if (read !== 'done' || buffer.length - i < length.value) return;
        const type = buffer[0]! >> 4;
        const body = buffer.subarray(i, i + length.value);
        buffer = buffer.subarray(i + length.value);
        if (type === 1) {
          state.connects++;
          socket.write(Buffer.from([0x20, 2, 0, answers.connack]));
        } else if (type === 3) {
          const topicLength = body.readUInt16BE(0);
          const id = body.subarray(2 + topicLength, 4 + topicLength);
          const outboxThen = fs.existsSync(outbox) ? fs.readFileSync(outbox, 'utf8') : '';
          received.push({ outboxThen, payload: JSON.parse(body.subarray(4 + topicLength).toString('utf8')) as EventPayload });
          if (answers.puback) void (answers.pubackAfter ?? Promise.resolve()).then(() => socket.write(Buffer.concat([Buffer.from([0x40, 2]), id])));
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    received,
    get connects() {
      return state.connects;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('mam event: the outbox first, then the broker, then the exit', function () {
  this.timeout(60_000);
  const TOKEN = 'the-jobs-token';

  async function setUp(answers: Answers) {
    const workspace = tempDir();
    const cp = controlPlane(workspace);
    const id = newJobId();
    await cp.jobs.create(jobRecord({ id, state: 'started' }));
    const jobDir = cp.paths.jobDir(id);
    fs.mkdirSync(jobDir, { recursive: true });
    writeJobToken(cp.paths, id, TOKEN);
    const broker = await fakeBroker(path.join(jobDir, 'outbox.ndjson'), answers);
    const run = (event: string, detail: string) =>
      mam(['event', event, '--job', id, '--detail', detail], { cwd: workspace, env: { ...process.env, MQTT_BROKER: '127.0.0.1', MQTT_PORT: String(broker.port) } });
    const outboxLines = (): EventPayload[] => fs.readFileSync(path.join(jobDir, 'outbox.ndjson'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { payload: EventPayload }).payload);
    const acked = (): string | undefined => (fs.existsSync(path.join(jobDir, 'acked')) ? fs.readFileSync(path.join(jobDir, 'acked'), 'utf8').trim().replace(/^0+(?=\d)/, '') : undefined); // zero-padded in place (outbox.ts)
    const env = { ...process.env, MQTT_BROKER: '127.0.0.1', MQTT_PORT: String(broker.port) };
    return { broker, run, outboxLines, acked, workspace, id, env };
  }

  it('each event is in the outbox, signed, before the broker receives it; acknowledged, it is marked so and said delivered', async () => {
    const { broker, run, outboxLines, acked } = await setUp({ connack: 0, puback: true });
    try {
      for (const [seq, detail] of [[1, 'first'], [2, 'second']] as const) {
        const r = await run('progress', detail);
        assert.equal(r.exitCode, 0, r.stderr);
        assert.equal(r.stdout, `event progress (seq ${seq}) delivered`);
        assert.equal(r.stderr, '');
        const got = broker.received.at(-1)!;
        assert.equal(got.payload.seq, seq);
        assert.equal(got.payload.detail, detail);
        assert.ok(verifySignature(got.payload, TOKEN), 'signed with the job token');
        // The line the broker was sent was already in the outbox, whole, when it arrived.
        const then = got.outboxThen.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { payload: EventPayload }).payload);
        assert.deepEqual(then.at(-1), got.payload);
        assert.equal(acked(), String(seq));
      }
      assert.equal(broker.received.length, 2);
      assert.equal(outboxLines().length, 2);
    } finally {
      await broker.close();
    }
  });

  it('a broker that never acknowledges: the warning, exit 0, the event kept in the outbox and not marked acknowledged', async () => {
    const { broker, run, outboxLines, acked } = await setUp({ connack: 0, puback: false });
    try {
      const r = await run('completed', 'done, unheard');
      assert.equal(r.exitCode, 0, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^mam: warning: no answer from 127\.0\.0\.1:\d+ within \d+ ms; event completed \(seq 1\) is safe in the job's outbox and will be delivered later$/);
      assert.equal(broker.received.length >= 1, true);
      assert.equal(outboxLines().at(-1)!.detail, 'done, unheard');
      assert.equal(acked(), undefined);
    } finally {
      await broker.close();
    }
  });

  it('a broker that refuses the connection: the warning says why, exit 0, nothing published, the event kept in the outbox', async () => {
    const { broker, run, outboxLines, acked } = await setUp({ connack: 5, puback: true });
    try {
      const r = await run('error', 'refused');
      assert.equal(r.exitCode, 0, r.stderr);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, "mam: warning: the broker refused the connection: not authorized; event error (seq 1) is safe in the job's outbox and will be delivered later");
      assert.equal(broker.connects, 1);
      assert.equal(broker.received.length, 0);
      assert.equal(outboxLines().at(-1)!.detail, 'refused');
      assert.equal(acked(), undefined);
    } finally {
      await broker.close();
    }
  });
  it('its reader gone before the line is written (EPIPE): the event is still published and acknowledged, exit 0', async () => {
    let readerGone!: () => void;
    const gone = new Promise<void>((resolve) => (readerGone = resolve));
    const { broker, outboxLines, acked, workspace, id, env } = await setUp({ connack: 0, puback: true, pubackAfter: gone });
    try {
      const child = spawn(process.execPath, [CLI, 'event', 'progress', '--job', id, '--detail', 'nobody reads this'], { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
      // The broker acknowledges only once the reader of the command's stdout has closed, so its line meets a closed pipe.
      child.stdout.once('close', () => readerGone());
      child.stdout.destroy();
      assert.equal(await exited, 0, stderr);
      assert.equal(stderr, '');
      assert.equal(outboxLines().at(-1)!.detail, 'nobody reads this');
      assert.equal(acked(), '1');
    } finally {
      await broker.close();
    }
  });
});
