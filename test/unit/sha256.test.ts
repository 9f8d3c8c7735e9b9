import { strict as assert } from 'node:assert';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { hex, hmacSha256, sha256 } from '../../src/core/base/sha256';

describe('sha256.ts: the hashes mam event computes without node:crypto', () => {
  it('SHA-256 of the standard vectors, of every length around the block edges, and of UTF-8 text', () => {
    assert.equal(hex(sha256('')), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    assert.equal(hex(sha256('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(hex(sha256('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')), '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
    for (let n = 0; n < 300; n++) {
      const data = randomBytes(n);
      assert.equal(hex(sha256(data)), createHash('sha256').update(data).digest('hex'), `${n} bytes`);
    }
    const text = '작업 완료 — "quotes" \u0000 and 🎉'.repeat(40);
    assert.equal(hex(sha256(text)), createHash('sha256').update(text).digest('hex'));
    const big = randomBytes(300_000);
    assert.equal(hex(sha256(big)), createHash('sha256').update(big).digest('hex'));
  });

  it('HMAC-SHA256 as node:crypto computes it: RFC 4231 case 2, short and long keys (hashed past 64 bytes), text and bytes', () => {
    assert.equal(hex(hmacSha256('Jefe', 'what do ya want for nothing?')), '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
    for (const keyLength of [0, 1, 16, 32, 63, 64, 65, 100, 200]) {
      for (const dataLength of [0, 1, 55, 56, 64, 119, 120, 1000]) {
        const key = randomBytes(keyLength).toString('hex').slice(0, keyLength);
        const data = randomBytes(dataLength);
        assert.equal(hex(hmacSha256(key, data)), createHmac('sha256', key).update(data).digest('hex'), `key ${keyLength}, data ${dataLength}`);
      }
    }
    const json = JSON.stringify({ job_id: 'j-1', detail: '리뷰 PASS 🎉', seq: 3 });
    assert.equal(hex(hmacSha256('토큰', json)), createHmac('sha256', '토큰').update(json).digest('hex'));
  });
});
