/**
 * Short titles for jobs and loops: what rows, pickers and notifications show. A title is given
 * (`mam job submit --title`), or named by the loop step that asked for the job ("Review · round 2"),
 * or taken from the task: its first sentence, at most TITLE_MAX characters, cut at a word. The
 * task itself stays in the brief; views show it on hover.
 */

export const TITLE_MAX = 60;

/** Words whose period does not end a sentence. */
const ABBREVIATIONS = /(?:^|\s)(?:e\.g|i\.e|etc|vs|cf|approx|incl|no|fig|mr|mrs|ms|dr|st)\.$/i;

/** The first sentence of a task: its first paragraph, hard wraps joined, without markdown heading or list marks. */
export function firstSentence(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const start = lines.findIndex((l) => l.trim() !== '');
  if (start < 0) return '';
  const paragraph: string[] = [];
  for (const line of lines.slice(start)) {
    if (line.trim() === '') break;
    // A heading is a paragraph of its own.
    if (/^\s{0,3}#{1,6}\s/.test(line)) {
      if (paragraph.length === 0) paragraph.push(line.replace(/^\s{0,3}#{1,6}\s+/, '').replace(/\s+#+\s*$/, ''));
      break;
    }
    const item = /^\s*(?:[-*+]|\d+[.)])\s+/;
    // A list after the first line is a block of its own.
    if (paragraph.length > 0 && item.test(line)) break;
    paragraph.push(line.replace(item, ''));
  }
  // Markdown's inline marks would show as typed: `code`, **bold**, __bold__.
  const joined = paragraph.join(' ').replace(/`+|\*\*|__/g, '').replace(/\s+/g, ' ').trim();
  // A sentence ends at . ! or ? followed by a space (not "src/signup.js", "v2.0", "e.g. this").
  const end = /[.!?](?=\s|$)/g;
  for (let m = end.exec(joined); m; m = end.exec(joined)) {
    const sentence = joined.slice(0, m.index + 1);
    if (ABBREVIATIONS.test(sentence)) continue;
    return m[0] === '.' ? sentence.slice(0, -1) : sentence;
  }
  return joined.replace(/:$/, '');
}

/** One line of at most `max` characters, cut at a word with "…" when longer. */
export function clampTitle(text: string, max = TITLE_MAX): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line.length <= max) return line;
  const room = line.slice(0, max - 1);
  const space = room.lastIndexOf(' ');
  // Cut at the last word that fits, unless that leaves too little (one long word: cut inside it).
  const cut = space >= max / 2 ? room.slice(0, space) : room;
  return `${cut.replace(/[\s,;:.\-–—(]+$/, '')}…`;
}

/** The title a task gets when none is given: its first sentence, shortened. */
export function titleFromTask(task: string): string {
  return clampTitle(firstSentence(task));
}

/** The title of a loop's job, from its step: "Plan", "Implement", "Review · round 2", "Fix · round 1". */
export function loopStepTitle(step: { kind: 'plan' | 'challenge' | 'revise' | 'implement' | 'review' | 'fix'; round: number | null; key: string }): string {
  const turn = /:(\d+)$/.exec(step.key)?.[1];
  switch (step.kind) {
    case 'plan':
      return 'Plan';
    case 'challenge':
      return `Plan · challenge${turn ? ` ${turn}` : ''}`;
    case 'revise':
      return `Plan · revision${turn ? ` ${turn}` : ''}`;
    case 'implement':
      return 'Implement';
    case 'review':
      return `Review · round ${step.round ?? '?'}`;
    case 'fix':
      return `Fix · round ${step.round ?? '?'}`;
  }
}

/**
 * Job records written before titles were short hold the first line of the prompt (up to 80
 * characters). Those the review loop and the composite jobs wrote are read back as their step.
 */
const LEGACY: ReadonlyArray<[RegExp, (m: RegExpExecArray) => string]> = [
  [/^Write an implementation plan for this task\b/, () => 'Plan'],
  [/\bwrote this plan for a task you will implement \(turn (\d+)\b/, (m) => `Plan · challenge ${m[1]}`],
  [/\bchallenged your plan\. Revise it\b/, () => 'Plan · revision'],
  [/^Implement this task in\b/, () => 'Implement'],
  [/^Review round (\d+) of the loop\b/, (m) => `Review · round ${m[1]}`],
  [/^The reviewers did not pass round (\d+) of your work\b/, (m) => `Fix · round ${m[1]}`],
  [/^Review the work done for this task \(iteration (\d+)\b/, (m) => `Review · iteration ${m[1]}`],
  [/^You are discussing this topic with another agent \(turn (\d+)\b/, (m) => `Discussion · turn ${m[1]}`],
];

/** What a job is called wherever it is listed: its title (old ones read as above, all kept short), else its ID. */
export function jobTitle(job: { id: string; title?: string | null }): string {
  const title = job.title?.trim();
  if (!title) return job.id;
  for (const [pattern, name] of LEGACY) {
    const m = pattern.exec(title);
    if (m) return name(m);
  }
  return clampTitle(title);
}

/** What a loop is called: its title, or (a loop recorded before loops had one) its task's first sentence. */
export function loopTitle(loop: { title?: string | null; task: string }): string {
  return loop.title?.trim() ? clampTitle(loop.title) : titleFromTask(loop.task);
}
