/**
 * Two "hosts" on one machine: two Linux network namespaces joined by a veth pair, for tests of what
 * a network partition does to MAM (test/faults/partition.test.ts). Everything made here is
 * undone by `dispose()`: every process still inside either namespace is killed (`ip netns pids`),
 * then both namespaces are deleted, which deletes the veth pair with them.
 *
 * A process is put on a host with `ip netns exec NS …`, which execs the program in place: the
 * child's pid is the program's pid, and it inherits the environment it is given (so the run-wide
 * guard's marker too). Unix sockets with a path (tmux's) and the filesystem are shared by both
 * hosts; TCP/IP is not: only the veth joins them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { BrokerEndpoint } from '../../src/core/messaging/brokerRecord';
import { until, watchChild, type WatchedProcess } from './helpers';
import { addMosquittoUser, mosquittoConfig, mosquittoCredentials } from './mosquitto';

/**
 * Why two network namespaces cannot be made here (not Linux, no iproute2, not root / no
 * CAP_NET_ADMIN), or undefined when they can: found by actually making one, with a veth in it.
 */
export function netnsMissing(): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (spawnSync('ip', ['-V'], { stdio: 'ignore' }).status !== 0) return 'iproute2 is not installed (apt-get install -y iproute2)';
  const probe = `mam-probe-${process.pid}-${randomBytes(3).toString('hex')}`;
  const added = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (added.status !== 0) return `cannot create a network namespace (ip netns add: ${added.stderr.trim() || `exit ${added.status}`}): needs root or CAP_NET_ADMIN`;
  try {
    const veth = spawnSync('ip', ['-n', probe, 'link', 'add', 'pa', 'type', 'veth', 'peer', 'name', 'pb'], { encoding: 'utf8' });
    if (veth.status !== 0) return `cannot create a veth pair in a network namespace: ${veth.stderr.trim()}`;
    const exec = spawnSync('ip', ['netns', 'exec', probe, process.execPath, '-e', '0'], { encoding: 'utf8' });
    if (exec.status !== 0) return `cannot run a program in a network namespace (ip netns exec): ${exec.stderr.trim()}`;
    return undefined;
  } finally {
    spawnSync('ip', ['netns', 'del', probe]);
  }
}

export interface Host {
  /** The network namespace. */
  ns: string;
  /** Its end of the veth pair, and that end's address. */
  ifname: string;
  ip: string;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** A long-running process on one host, its output collected as it comes. */
export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Hosts in network namespaces, and what a test does with them: run a program on one, cut its link
 * and restore it, see its connections, and undo everything at the end.
 */
export abstract class NetnsHosts {
  private disposed = false;

  protected constructor(
    protected readonly all: readonly Host[],
    /** Namespaces beyond the hosts' own (a switch's), deleted with them. */
    private readonly others: readonly string[] = [],
  ) {
    // Should the run end without `dispose` (an interrupted mocha), the namespaces still go.
    process.once('exit', this.onExit);
  }

  private readonly onExit = (): void => this.disposeSync();

  /** Takes `host`'s end of the link down: its route to the other hosts goes; the other end loses carrier. */
  cut(host: Host): void {
    ip('-n', host.ns, 'link', 'set', host.ifname, 'down');
  }

  restore(host: Host): void {
    ip('-n', host.ns, 'link', 'set', host.ifname, 'up');
  }

  /** The TCP connections in state ESTABLISHED on `host` whose far end is `to` (ss's own lines). */
  establishedTo(host: Host, to: { host: string; port: number }): string[] {
    const r = spawnSync('ip', ['netns', 'exec', host.ns, 'ss', '-Htn', 'state', 'established', 'dst', `${to.host}:${to.port}`], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ss on ${host.ns} failed: ${r.stderr.trim()}`);
    return r.stdout.split('\n').filter((l) => l.trim() !== '');
  }

  /** Runs `argv` on `host` and waits for it (bounded). */
  run(host: Host, argv: string[], options: RunOptions, timeoutMs = 60_000): Promise<ExecResult> {
    const p = this.spawn(host, argv, options);
    const timer = setTimeout(() => void p.stop(1_000), timeoutMs);
    return p.exited.then((code) => {
      clearTimeout(timer);
      return { exitCode: code ?? -1, stdout: p.stdout, stderr: p.stderr };
    });
  }

  /** Starts `argv` on `host`. */
  spawn(host: Host, argv: string[], options: RunOptions): WatchedProcess {
    const child = spawn('ip', ['netns', 'exec', host.ns, ...argv], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    return watchChild(child, `${path.basename(argv[0]!)} on ${host.ns}`);
  }

  /** Every pid inside `host`'s namespace. */
  pids(host: Host): number[] {
    const r = spawnSync('ip', ['netns', 'pids', host.ns], { encoding: 'utf8' });
    return r.status === 0 ? r.stdout.split('\n').filter(Boolean).map(Number) : [];
  }

  /** Kills everything that runs on `host` (SIGKILL): the host goes down as it would lose power. Waits until nothing is left. */
  async killAll(host: Host): Promise<void> {
    for (const pid of this.pids(host)) kill(pid, 'SIGKILL');
    await until(() => this.pids(host).length === 0, 5_000, `the processes on ${host.ns} to die`, 20);
  }

  /** Kills whatever still runs on any host (SIGTERM, then SIGKILL), then deletes the namespaces. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      for (const h of this.all) for (const pid of this.pids(h)) kill(pid, signal);
      try {
        await until(() => this.all.every((h) => this.pids(h).length === 0), 3_000, 'the processes in the namespaces to exit', 50);
        break;
      } catch {
        // on to SIGKILL
      }
    }
    this.disposeSync();
  }

  protected disposeSync(): void {
    this.disposed = true;
    process.removeListener('exit', this.onExit);
    for (const h of this.all) {
      for (const pid of this.pids(h)) kill(pid, 'SIGKILL');
      spawnSync('ip', ['netns', 'del', h.ns], { stdio: 'ignore' });
    }
    for (const ns of this.others) spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
  }
}

export class TwoHosts extends NetnsHosts {
  private constructor(
    readonly a: Host,
    readonly b: Host,
  ) {
    super([a, b]);
  }

  /**
   * Makes hosts A (10.213.0.1) and B (10.213.0.2), each in its own namespace with loopback up, joined
   * by a veth pair. The addresses live only inside the namespaces, so parallel runs cannot clash.
   */
  static create(): TwoHosts {
    const tag = `${process.pid.toString(36)}${randomBytes(2).toString('hex')}`;
    const hosts = new TwoHosts({ ns: `mam-a-${tag}`, ifname: `va${tag}`.slice(0, 15), ip: '10.213.0.1' }, { ns: `mam-b-${tag}`, ifname: `vb${tag}`.slice(0, 15), ip: '10.213.0.2' });
    try {
      for (const h of [hosts.a, hosts.b]) ip('netns', 'add', h.ns);
      ip('link', 'add', hosts.a.ifname, 'netns', hosts.a.ns, 'type', 'veth', 'peer', 'name', hosts.b.ifname, 'netns', hosts.b.ns);
      for (const h of [hosts.a, hosts.b]) {
        ip('-n', h.ns, 'addr', 'add', `${h.ip}/30`, 'dev', h.ifname);
        ip('-n', h.ns, 'link', 'set', 'lo', 'up');
        ip('-n', h.ns, 'link', 'set', h.ifname, 'up');
      }
    } catch (err) {
      hosts.disposeSync();
      throw err;
    }
    return hosts;
  }
}

/**
 * Any number of hosts on one switch: a namespace per host (10.213.1.1, .2, …, loopback up), each
 * joined by a veth pair to a bridge in a namespace of its own, as machines on one LAN. A host's
 * link is cut (`cut`) at its own end, as with TwoHosts.
 */
export class HostNet extends NetnsHosts {
  private constructor(
    readonly hosts: readonly Host[],
    private readonly switchNs: string,
  ) {
    super(hosts, [switchNs]);
  }

  static create(count: number): HostNet {
    const tag = `${process.pid.toString(36)}${randomBytes(2).toString('hex')}`;
    const hosts = Array.from({ length: count }, (_, i): Host => ({ ns: `mam-h${i}-${tag}`, ifname: `h${i}${tag}`.slice(0, 15), ip: `10.213.1.${i + 1}` }));
    const net = new HostNet(hosts, `mam-sw-${tag}`);
    try {
      ip('netns', 'add', net.switchNs);
      ip('-n', net.switchNs, 'link', 'add', 'br0', 'type', 'bridge');
      ip('-n', net.switchNs, 'link', 'set', 'br0', 'up');
      hosts.forEach((h, i) => {
        ip('netns', 'add', h.ns);
        // The host's end in its namespace, the switch's end on the bridge.
        ip('link', 'add', h.ifname, 'netns', h.ns, 'type', 'veth', 'peer', 'name', `p${i}`, 'netns', net.switchNs);
        ip('-n', net.switchNs, 'link', 'set', `p${i}`, 'master', 'br0');
        ip('-n', net.switchNs, 'link', 'set', `p${i}`, 'up');
        ip('-n', h.ns, 'addr', 'add', `${h.ip}/24`, 'dev', h.ifname);
        ip('-n', h.ns, 'link', 'set', 'lo', 'up');
        ip('-n', h.ns, 'link', 'set', h.ifname, 'up');
      });
    } catch (err) {
      net.disposeSync();
      throw err;
    }
    return net;
  }
}

function ip(...args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim() || `exit ${r.status}`}`);
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone meanwhile
  }
}

/**
 * Per-user ACLs for the broker (Mosquitto's acl_file): each user gets a password and may use only
 * the topics its lines name (`topic read|write|readwrite FILTER`). The admin user of the endpoint
 * may use every topic.
 */
export interface NsAcl {
  users: Array<{ name: string; topics: string[] }>;
}

export interface NsMosquitto {
  /** The admin user's endpoint. */
  endpoint: BrokerEndpoint;
  /** With an ACL: each user's endpoint. */
  users: Record<string, BrokerEndpoint>;
  aclFile?: string;
  dir: string;
  process: WatchedProcess;
  /** Its log so far (log_type all but debug). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Mosquitto on `host`, listening on the host's veth address only, configured like
 * test/support/mosquitto.ts makes it: a password file, TCP_NODELAY, queue limits chosen on purpose
 * (generous: a drop here must not be the broker's default limits), no persistence, and a log that
 * says when a client connects, times out or is taken over. Ready once it logs that it runs.
 */
export async function startMosquittoOn(hosts: NetnsHosts, host: Host, dir: string, env: NodeJS.ProcessEnv, options: { acl?: NsAcl } = {}): Promise<NsMosquitto> {
  const { username, password, passwordFile } = mosquittoCredentials(dir);
  const port = 1883; // the namespace is the broker's own: nothing else listens there
  const logFile = path.join(dir, 'mosquitto.log');
  const config = path.join(dir, 'mosquitto.conf');
  const endpointOf = (u: { username: string; password: string }): BrokerEndpoint => ({ host: host.ip, port, tls: false, username: u.username, password: u.password, embedded: false });
  const users: Record<string, BrokerEndpoint> = {};
  let aclFile: string | undefined;
  if (options.acl) {
    aclFile = path.join(dir, 'acl');
    const lines = [`user ${username}`, 'topic readwrite #', ''];
    for (const u of options.acl.users) {
      users[u.name] = endpointOf(addMosquittoUser(passwordFile, u.name));
      lines.push(`user ${u.name}`, ...u.topics, '');
    }
    fs.writeFileSync(aclFile, lines.join('\n'));
  }
  fs.writeFileSync(config, mosquittoConfig({ listener: `${port} ${host.ip}`, passwordFile, logFile, logConnections: true, ...(aclFile ? { aclFile } : {}) }));
  const child = hosts.spawn(host, ['mosquitto', '-c', config], { cwd: dir, env });
  const log = (): string => {
    try {
      return fs.readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  const stop = async (): Promise<void> => void (await child.stop(3_000));
  try {
    await until(() => {
      if (child.code !== undefined) throw new Error(`mosquitto exited (${child.code}): ${child.stderr}${log()}`);
      return /mosquitto version \S+ running/.test(log());
    }, 10_000, 'mosquitto to run', 20);
  } catch (err) {
    await stop();
    throw err;
  }
  return { endpoint: endpointOf({ username, password }), users, ...(aclFile ? { aclFile } : {}), dir, process: child, log, stop };
}
