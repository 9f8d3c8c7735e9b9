import { strict as assert } from 'node:assert';
import { NeedsAttentionError, SessionAttention } from '../../src/core/sessions/sessionAttention';
import { UsageError } from '../../src/core/base/errors';

describe('session attention (which running agents show a screen for a person)', () => {
  const trust = { id: 'trust', name: 'a folder-trust dialog', answer: 'Answer it in the pane.' };
  const login = { id: 'login', name: 'a login screen', answer: 'Log in in the pane.' };

  it("says a monitor's look changed only when a session's screen did, and keeps the last look", () => {
    const a = new SessionAttention();
    assert.equal(a.note(new Map()), false, 'nothing before, nothing now');
    assert.equal(a.note(new Map([['s1', trust]])), true);
    assert.equal(a.note(new Map([['s1', trust]])), false, 'the same screen again');
    assert.equal(a.note(new Map([['s1', login]])), true, 'another screen on the same session');
    assert.equal(a.last('s1'), login);
    assert.equal(a.note(new Map()), true, 'answered');
    assert.equal(a.last('s1'), undefined);
  });

  it('remembers the screen a create or resume stopped at, and nothing for other errors', () => {
    const a = new SessionAttention();
    a.stoppedAt(new UsageError('bad name'));
    a.stoppedAt(new NeedsAttentionError('no ready sign', 's2', null));
    assert.equal(a.last('s2'), undefined, 'no screen named: nothing to show');
    a.stoppedAt(new NeedsAttentionError('shows a dialog', 's3', trust));
    assert.equal(a.last('s3'), trust);
  });
});
