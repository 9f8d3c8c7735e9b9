import * as vscode from 'vscode';

/** Answers that are not labels or text: press the Back button, or close the prompt (Escape). */
export const BACK = '<back>';
export const CANCEL = '<cancel>';

/** A prompt a command showed, as the user saw it. */
export interface Asked {
  kind: 'pick' | 'input' | 'modal';
  title: string;
  step?: number | undefined;
  totalSteps?: number | undefined;
  placeholder?: string | undefined;
  back?: boolean;
  /** An input box's text when it opened (a suggestion, or the answer given before Back). */
  value?: string;
  items?: Array<{ label: string; description?: string | undefined; separator: boolean }>;
}

type Item = vscode.QuickPickItem;
type Stubbed = 'showQuickPick' | 'showInputBox' | 'showWarningMessage' | 'showErrorMessage' | 'showInformationMessage' | 'createQuickPick' | 'createInputBox';

/**
 * The user at the keyboard, for commands run for real: every quick pick, input box (the one-shot
 * `showQuickPick` / `showInputBox` and the multi-step `createQuickPick` / `createInputBox` objects)
 * and modal question takes the next answer, by label, as a person would; `BACK` presses the Back
 * button and `CANCEL` closes the prompt. Each prompt is recorded as shown (title, step, placeholder,
 * items); error messages are collected, warnings recorded, information messages recorded (and still shown).
 */
export class Prompts {
  readonly answers: Array<string | string[]> = [];
  readonly asked: Asked[] = [];
  readonly errors: string[] = [];
  readonly infos: string[] = [];
  readonly warnings: string[] = [];
  private readonly original: Partial<Record<Stubbed, unknown>> = {};

  install(): void {
    const win = vscode.window as unknown as Record<Stubbed, unknown>;
    for (const k of ['showQuickPick', 'showInputBox', 'showWarningMessage', 'showErrorMessage', 'showInformationMessage', 'createQuickPick', 'createInputBox'] as const) this.original[k] = win[k];
    win.showQuickPick = async (items: unknown, options?: { title?: string; placeHolder?: string; canPickMany?: boolean }) => {
      const list = (await items) as Item[];
      this.asked.push({ kind: 'pick', title: String(options?.title), placeholder: options?.placeHolder, items: describe(list) });
      const answer = this.next(String(options?.title));
      if (answer === CANCEL) return undefined;
      return options?.canPickMany ? this.findAll(list, answer) : this.find(list, answer);
    };
    win.showInputBox = async (options?: { title?: string; placeHolder?: string; validateInput?: (v: string) => unknown }) => {
      this.asked.push({ kind: 'input', title: String(options?.title), placeholder: options?.placeHolder });
      const answer = this.next(String(options?.title));
      if (answer === CANCEL) return undefined;
      const problem = await options?.validateInput?.(String(answer));
      if (problem) throw new Error(`the input box refused '${String(answer)}': ${String(problem)}`);
      return answer;
    };
    win.showWarningMessage = async (message: unknown, ...rest: unknown[]) => {
      // Only modal questions wait for an answer; other warnings are notes to the user.
      if (typeof rest[0] === 'object' && rest[0] && (rest[0] as { modal?: boolean }).modal) {
        this.asked.push({ kind: 'modal', title: String(message) });
        return this.next(String(message));
      }
      this.warnings.push(String(message));
      return undefined;
    };
    win.showErrorMessage = async (message: unknown) => {
      this.errors.push(String(message));
      return undefined;
    };
    const showInfo = this.original.showInformationMessage as (...args: unknown[]) => Thenable<unknown>;
    win.showInformationMessage = (message: unknown, ...rest: unknown[]) => {
      this.infos.push(String(message));
      return showInfo.call(vscode.window, message, ...rest);
    };
    win.createQuickPick = () => this.quickInput('pick');
    win.createInputBox = () => this.quickInput('input');
  }

  restore(): void {
    Object.assign(vscode.window, this.original);
  }

  /** What the multi-step prompts showed, as `step/total placeholder` lines. */
  steps(from = 0): string[] {
    return this.asked.slice(from).filter((a) => a.step !== undefined).map((a) => `${a.step}/${a.totalSteps} ${a.placeholder}`);
  }

  private next(asked: string): string | string[] {
    const answer = this.answers.shift();
    if (answer === undefined) throw new Error(`no answer left for: ${asked}`);
    return answer;
  }

  private find(list: readonly Item[], answer: string | string[]): Item {
    const found = list.find((i) => i.kind !== vscode.QuickPickItemKind.Separator && (i.label === answer || i.label.endsWith(` ${String(answer)}`)));
    if (!found) throw new Error(`no item '${String(answer)}' among ${list.map((i) => i.label).join(', ')}`);
    return found;
  }

  private findAll(list: readonly Item[], answer: string | string[]): Item[] {
    return (Array.isArray(answer) ? answer : [answer]).map((a) => this.find(list, a));
  }

  /**
   * A QuickPick or InputBox that behaves as VS Code's does for the properties and events a command
   * uses; when shown, it takes the next answer: Back, Escape, or the item / text and Enter.
   */
  private quickInput(kind: 'pick' | 'input'): unknown {
    const accept = new vscode.EventEmitter<void>();
    const hide = new vscode.EventEmitter<void>();
    const button = new vscode.EventEmitter<vscode.QuickInputButton>();
    const value = new vscode.EventEmitter<string>();
    let hidden = false;
    const input = {
      title: undefined as string | undefined,
      step: undefined as number | undefined,
      totalSteps: undefined as number | undefined,
      placeholder: undefined as string | undefined,
      prompt: undefined as string | undefined,
      value: '',
      password: false,
      validationMessage: undefined as string | undefined,
      buttons: [] as readonly vscode.QuickInputButton[],
      items: [] as readonly Item[],
      activeItems: [] as readonly Item[],
      selectedItems: [] as readonly Item[],
      canSelectMany: false,
      matchOnDescription: false,
      matchOnDetail: false,
      ignoreFocusOut: false,
      busy: false,
      enabled: true,
      onDidAccept: accept.event,
      onDidHide: hide.event,
      onDidTriggerButton: button.event,
      onDidChangeValue: value.event,
      onDidChangeActive: new vscode.EventEmitter<readonly Item[]>().event,
      onDidChangeSelection: new vscode.EventEmitter<readonly Item[]>().event,
      hide: () => {
        if (hidden) return;
        hidden = true;
        hide.fire();
      },
      dispose: () => input.hide(),
      show: () => {
        const back = input.buttons.includes(vscode.QuickInputButtons.Back);
        this.asked.push({ kind, title: String(input.title), step: input.step, totalSteps: input.totalSteps, placeholder: input.placeholder, back, ...(kind === 'pick' ? { items: describe(input.items) } : { value: input.value }) });
        setImmediate(() => {
          try {
            const answer = this.next(`${input.title} ${input.step}/${input.totalSteps}: ${input.placeholder}`);
            if (answer === BACK) {
              if (!back) throw new Error(`no Back button on ${input.title} step ${input.step}`);
              button.fire(vscode.QuickInputButtons.Back);
            } else if (answer === CANCEL) {
              input.hide();
            } else if (kind === 'pick') {
              input.selectedItems = input.canSelectMany ? this.findAll(input.items, answer) : [this.find(input.items, answer)];
              accept.fire();
            } else {
              input.value = String(answer);
              value.fire(input.value);
              accept.fire();
              if (input.validationMessage) throw new Error(`the input box refused '${input.value}': ${input.validationMessage}`);
            }
          } catch (err) {
            this.errors.push((err as Error).message);
            input.hide();
          }
        });
      },
    };
    return input;
  }
}

function describe(items: readonly Item[]): NonNullable<Asked['items']> {
  return items.map((i) => ({ label: i.label, description: i.description, separator: i.kind === vscode.QuickPickItemKind.Separator }));
}
