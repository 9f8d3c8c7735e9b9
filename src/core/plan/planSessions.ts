import { abandonedCreate, type SessionService } from '../sessions/sessionService';
import type { Assignee, PlanTask } from './planFile';

/** Who works on a task, as session names the loop takes (`human:NAME` for a person). */
export interface TaskSessions {
  creator: string;
  reviewers: string[];
  planner: string | null;
}

export interface AssigneeRequest {
  planId: string;
  task: PlanTask;
  /** The task's worktree: where the sessions the plan creates run. */
  worktree: string;
  /** Sessions this task's run created already (a resumed run reuses them). */
  already: readonly string[];
  /** Written down as soon as a session exists, before the next is created. */
  onCreated: (name: string) => Promise<unknown>;
}

/**
 * The task's creator, reviewers and planner as sessions: an agent name or a `{ agent: shell,
 * command }` gets a session of its own, made for this task in its worktree (named after the plan
 * and the task, so a resumed run finds it, and resumed if it was stopped); a session name is used
 * as it is; a person stays `human:NAME`.
 */
export async function assigneeSessions(sessions: SessionService, req: AssigneeRequest): Promise<TaskSessions> {
  const short = req.planId.slice(-6);
  const one = async (who: Assignee, role: 'creator' | 'reviewer' | 'planner', label: string): Promise<string> => {
    if (who.kind === 'person') return `human:${who.name}`;
    if (who.kind === 'session') return who.name;
    const name = `${short}-${req.task.id}-${label}`.slice(0, 64);
    const existing = await sessions.require(name).catch(() => undefined);
    // A create killed midway (this run's, before a crash) left a `starting` row with no pane: it is
    // no session; creating it again clears that row.
    if (existing && !abandonedCreate(existing)) {
      // Made by this task before a crash (recorded or not): taken up again, resumed if it stopped.
      if (!req.already.includes(name)) await req.onCreated(name);
      if (existing.status !== 'running' && existing.status !== 'starting') await sessions.resume(name, { baseDir: req.worktree });
      return name;
    }
    await sessions.create({ name, agent: who.agent, role, cwd: req.worktree, baseDir: req.worktree, ...(who.command ? { command: who.command } : {}) });
    await req.onCreated(name);
    return name;
  };
  const creator = await one(req.task.creator, 'creator', 'c');
  const reviewers: string[] = [];
  for (const [i, r] of req.task.reviewers.entries()) reviewers.push(await one(r, 'reviewer', `r${i + 1}`));
  const planner = req.task.planner ? await one(req.task.planner, 'planner', 'p') : null;
  return { creator, reviewers, planner };
}
