import type * as vscode from 'vscode';

/**
 * Base for objects that own disposables (after vscode-pull-request-github's lifecycle.ts):
 * `_register(x)` ties x to the owner's life, and disposes x at once if the owner is already gone.
 */
export abstract class DisposableBase implements vscode.Disposable {
  private readonly owned: vscode.Disposable[] = [];
  private disposed = false;

  protected _register<T extends vscode.Disposable>(item: T): T {
    if (this.disposed) item.dispose();
    else this.owned.push(item);
    return item;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const item of this.owned.splice(0).reverse()) item.dispose();
  }
}
