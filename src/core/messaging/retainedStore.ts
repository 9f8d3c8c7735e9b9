/**
 * The embedded broker's retained messages on disk, so the retained job states survive a daemon
 * restart. aedes keeps them in memory (aedes-persistence); the disk-backed aedes persistences need
 * LevelDB, Redis or MongoDB, too much for one JSON file's worth of state. So the daemon mirrors every
 * retained publish here (debounced, atomic write) and replays the file into aedes on start.
 */
import * as fs from 'node:fs';
import { systemClock, type Clock } from '../base/clock';
import { errorMessage, isErrnoException } from '../base/errors';
import type { Logger } from '../base/log';
import { list, lit, obj, oneOf, parse, str, type Infer } from '../base/schema';
import { writeFileAtomic } from '../store/atomicFile';

export interface RetainedMessage {
  topic: string;
  payload: Buffer;
  qos: 0 | 1 | 2;
}

const retainedFile = obj({
  version: lit(1),
  retained: list(obj({ topic: str(), qos: oneOf([0, 1, 2]), payload: str() })),
});
type RetainedFile = Infer<typeof retainedFile>;

export class RetainedStore {
  private readonly messages = new Map<string, RetainedMessage>();
  private timer: unknown;

  constructor(
    private readonly file: string,
    private readonly logger: Logger,
    private readonly debounceMs = 100,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Reads the file (a malformed one is moved aside with a warning) and returns what it held. */
  load(): RetainedMessage[] {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if (isErrnoException(err, 'ENOENT')) return [];
      throw err;
    }
    try {
      const parsed = parse(retainedFile, JSON.parse(text), undefined, 'the file');
      for (const m of parsed.retained) this.messages.set(m.topic, { topic: m.topic, qos: m.qos, payload: Buffer.from(m.payload, 'base64') });
    } catch (err) {
      this.messages.clear();
      const aside = `${this.file}.corrupt-${this.clock.now()}`;
      fs.renameSync(this.file, aside);
      this.logger.warn(`${this.file}: ${errorMessage(err)}; moved it to ${aside} and started with no retained messages`);
    }
    return [...this.messages.values()];
  }

  /** Records a retained publish; an empty payload clears the topic, as in MQTT. */
  update(topic: string, payload: Buffer, qos: 0 | 1 | 2): void {
    if (payload.length === 0) {
      if (!this.messages.delete(topic)) return;
    } else {
      this.messages.set(topic, { topic, payload: Buffer.from(payload), qos });
    }
    this.timer ??= this.clock.setTimeout(() => this.flush(), this.debounceMs);
  }

  get size(): number {
    return this.messages.size;
  }

  /** Writes pending changes now (also on shutdown). */
  flush(): void {
    if (this.timer === undefined) return;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const data: RetainedFile = {
      version: 1,
      retained: [...this.messages.values()].map((m) => ({ topic: m.topic, qos: m.qos, payload: m.payload.toString('base64') })),
    };
    try {
      writeFileAtomic(this.file, JSON.stringify(data), { mode: 0o600 });
    } catch (err) {
      this.logger.error(`could not save retained messages to ${this.file}: ${errorMessage(err)}`);
    }
  }

  /** Drops pending changes without writing (the workspace is gone). */
  discard(): void {
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
