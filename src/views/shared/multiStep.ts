import * as vscode from 'vscode';

/** Thrown by a step's prompt: the user pressed Back, or closed the prompt. */
const BACK = Symbol('back');
const CANCEL = Symbol('cancel');

/**
 * One prompt of a multi-step input. `when` leaves a step out (e.g. the command step, only for the
 * shell agent); it may read what earlier steps chose, so the step count follows the choices.
 */
export interface Step {
  when?: () => boolean;
  run: (input: StepInput) => Promise<void>;
}

export interface PickOptions<T extends vscode.QuickPickItem> {
  placeholder: string;
  items: readonly T[];
  /** The item to start on (the one chosen before, after Back). */
  active?: T | undefined;
  matchOnDescription?: boolean;
  matchOnDetail?: boolean;
}

export interface InputOptions {
  placeholder?: string;
  prompt?: string;
  value?: string | undefined;
  password?: boolean;
  validate?: (value: string) => string | undefined;
}

/**
 * Runs `steps` as one titled flow: each prompt shows "step/total" and, past the first, a Back
 * button (after the multi-step sample in microsoft/vscode-extension-samples). Resolves true when
 * every step ran, false when the user closed a prompt.
 */
export async function runSteps(title: string, steps: readonly Step[]): Promise<boolean> {
  let at = 0;
  for (;;) {
    const shown = steps.filter((s) => s.when?.() ?? true);
    if (at >= shown.length) return true;
    try {
      await shown[at]!.run(new StepInput(title, at + 1, shown.length));
      at++;
    } catch (err) {
      if (err === BACK) at = Math.max(0, at - 1);
      else if (err === CANCEL) return false;
      else throw err;
    }
  }
}

/** The prompts a step can show; each resolves with the answer or throws Back / Cancel to runSteps. */
export class StepInput {
  constructor(
    readonly title: string,
    readonly step: number,
    readonly totalSteps: number,
  ) {}

  pick<T extends vscode.QuickPickItem>(options: PickOptions<T>): Promise<T> {
    const pick = this.prepare(vscode.window.createQuickPick<T>());
    pick.placeholder = options.placeholder;
    pick.items = options.items;
    pick.matchOnDescription = options.matchOnDescription ?? false;
    pick.matchOnDetail = options.matchOnDetail ?? false;
    if (options.active) pick.activeItems = [options.active];
    return this.settle(pick, (resolve) => [
      pick.onDidAccept(() => {
        const [item] = pick.selectedItems;
        if (item) resolve(item);
      }),
    ]);
  }

  /** Several items at once; `picked` items start selected. */
  pickMany<T extends vscode.QuickPickItem>(options: PickOptions<T>): Promise<T[]> {
    const pick = this.prepare(vscode.window.createQuickPick<T>());
    pick.canSelectMany = true;
    pick.placeholder = options.placeholder;
    pick.items = options.items;
    pick.selectedItems = options.items.filter((i) => i.picked);
    pick.matchOnDescription = options.matchOnDescription ?? false;
    return this.settle(pick, (resolve) => [pick.onDidAccept(() => resolve([...pick.selectedItems]))]);
  }

  input(options: InputOptions): Promise<string> {
    const box = this.prepare(vscode.window.createInputBox());
    box.placeholder = options.placeholder;
    box.prompt = options.prompt;
    box.value = options.value ?? '';
    box.password = options.password ?? false;
    const check = (value: string) => (box.validationMessage = options.validate?.(value));
    if (options.value) check(options.value);
    return this.settle(box, (resolve) => [
      box.onDidChangeValue(check),
      box.onDidAccept(() => {
        if (!check(box.value)) resolve(box.value);
      }),
    ]);
  }

  private prepare<Q extends vscode.QuickInput & { buttons: readonly vscode.QuickInputButton[] }>(input: Q): Q {
    input.title = this.title;
    input.step = this.step;
    input.totalSteps = this.totalSteps;
    input.ignoreFocusOut = true; // a click into the editor (to copy a line for the task) must not lose the earlier answers
    if (this.step > 1) input.buttons = [vscode.QuickInputButtons.Back];
    return input;
  }

  private settle<Q extends vscode.QuickInput & { onDidTriggerButton: vscode.Event<vscode.QuickInputButton> }, R>(input: Q, listen: (resolve: (value: R) => void) => vscode.Disposable[]): Promise<R> {
    const subscriptions: vscode.Disposable[] = [];
    return new Promise<R>((resolve, reject) => {
      let done = false;
      const finish = (f: () => void) => {
        if (done) return;
        done = true;
        f();
      };
      subscriptions.push(
        ...listen((value) => finish(() => resolve(value))),
        input.onDidTriggerButton((b) => b === vscode.QuickInputButtons.Back && finish(() => reject(BACK))),
        input.onDidHide(() => finish(() => reject(CANCEL))),
      );
      input.show();
    }).finally(() => {
      for (const s of subscriptions) s.dispose();
      input.dispose();
    });
  }
}
