import * as vscode from 'vscode';

/**
 * Files a tree view could not read (a corrupt queue, a loop file edited by hand): named in the
 * view's message rather than left out silently. A provider updates it on each read of its root;
 * the view shows the lines while there are any.
 */
export class ViewProblems implements vscode.Disposable {
  private lines: string[] = [];
  private readonly changed = new vscode.EventEmitter<string[]>();
  readonly onDidChange = this.changed.event;

  get current(): readonly string[] {
    return this.lines;
  }

  update(lines: string[]): void {
    if (lines.join('\n') === this.lines.join('\n')) return;
    this.lines = lines;
    this.changed.fire(lines);
  }

  /** Shows the problems as `view`'s message, and clears it when they are gone. */
  showIn(view: vscode.TreeView<unknown>): vscode.Disposable {
    return this.onDidChange((lines) => (view.message = lines.length > 0 ? lines.join('\n') : undefined));
  }

  dispose(): void {
    this.changed.dispose();
  }
}
