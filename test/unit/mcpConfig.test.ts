import { strict as assert } from 'node:assert';
import { parse as parseJsonc } from 'jsonc-parser';
import { MCP_FORMATS } from '../../src/core/init/mcpConfig';

const SERVER = { command: 'node', args: ['/opt/mam/dist/cli.js', 'mcp', '--workspace', '/w'] };

/**
 * Adding MAM's server entry to a config file a person wrote, and taking it out again: in each
 * layout the entry lands in the file's own indentation, and removing it gives back the original
 * bytes (the integration tests, initMcp.test.ts, run the same through `mam init`).
 */
describe('an MCP server entry added to and removed from a JSON(C) or TOML config, byte for byte', () => {
  const json = MCP_FORMATS.json;
  const roundTrip = (text: string, container = 'mcpServers') => {
    const read = json.read(text, container, 'mam');
    assert.ok(read.ok && read.current === undefined, JSON.stringify(read));
    const added = json.add(text, container, 'mam', SERVER);
    assert.ok(added.ok);
    const after = json.read(added.text, container, 'mam');
    assert.ok(after.ok);
    assert.deepEqual(JSON.parse(JSON.stringify(after.current)), SERVER);
    assert.equal(json.remove(added.text, container, 'mam', SERVER, { separator: added.separator, dropContainer: !read.hasContainer }), text);
    return added.text;
  };

  it('JSON: beside other servers, into an empty object, with no container yet, tabs, CRLF, comments and a trailing comma', () => {
    assert.equal(roundTrip('{\n  "mcpServers": {\n    "a": { "command": "x" }\n  }\n}\n'), '{\n  "mcpServers": {\n    "a": { "command": "x" },\n    "mam": {\n      "command": "node",\n      "args": [\n        "/opt/mam/dist/cli.js",\n        "mcp",\n        "--workspace",\n        "/w"\n      ]\n    }\n  }\n}\n');
    assert.match(roundTrip('{\n  "mcpServers": {}\n}\n'), /^\{\n {2}"mcpServers": \{\n {4}"mam": \{\n[\s\S]*\n {4}\}\n {2}\}\n\}\n$/);
    assert.match(roundTrip('{\n\t"theme": "dark"\n}'), /^\{\n\t"theme": "dark",\n\t"mcpServers": \{\n\t\t"mam": \{\n\t\t\t"command": "node",/);
    assert.match(roundTrip('{\r\n  "a": 1\r\n}\r\n'), /^\{\r\n {2}"a": 1,\r\n {2}"mcpServers": \{\r\n {4}"mam": \{\r\n/);
    const commented = roundTrip('{\n  // ours\n  "mcp": {\n    "x": { "type": "local", "command": ["x"] }, // the x server\n  },\n}\n', 'mcp');
    assert.deepEqual(Object.keys(parseJsonc(commented, [], { allowTrailingComma: true }).mcp), ['x', 'mam']);
    assert.ok(commented.includes('// ours') && commented.includes('// the x server'));
    assert.equal(roundTrip('{}'), '{\n  "mcpServers": {\n    "mam": {\n      "command": "node",\n      "args": [\n        "/opt/mam/dist/cli.js",\n        "mcp",\n        "--workspace",\n        "/w"\n      ]\n    }\n  }\n}');
  });

  it('JSON: what cannot take the entry says why', () => {
    assert.deepEqual(json.read('{ "mcpServers": ', 'mcpServers', 'mam'), { ok: false, why: 'not valid JSON (ValueExpected at line 1)' });
    assert.deepEqual(json.read('[1]', 'mcpServers', 'mam'), { ok: false, why: 'not a JSON object' });
    assert.deepEqual(json.read('{ "mcpServers": "x" }', 'mcpServers', 'mam'), { ok: false, why: 'its "mcpServers" is not an object' });
    assert.deepEqual(json.read('', 'mcpServers', 'mam'), { ok: false, why: 'not valid JSON (ValueExpected at line 1)' });
  });

  it('TOML: a table of its own after the rest, however the file ends; an inline table of servers cannot take it', () => {
    const toml = MCP_FORMATS.toml;
    for (const text of ['', 'model = "o3"', 'model = "o3"\n', 'model = "o3"\n\n', '[mcp_servers.docs]\ncommand = "d"\n']) {
      const added = toml.add(text, 'mcp_servers', 'mam', SERVER);
      assert.ok(added.ok, text);
      assert.ok(added.text.startsWith(text) && added.text.endsWith('[mcp_servers.mam]\ncommand = "node"\nargs = [ "/opt/mam/dist/cli.js", "mcp", "--workspace", "/w" ]\n'), added.text);
      const read = toml.read(added.text, 'mcp_servers', 'mam');
      assert.ok(read.ok);
      assert.equal(toml.remove(added.text, 'mcp_servers', 'mam', read.current, { separator: added.separator, dropContainer: true }), text);
    }
    assert.deepEqual(toml.add('mcp_servers = { docs = { command = "d" } }\n', 'mcp_servers', 'mam', SERVER), { ok: false, why: 'a [mcp_servers.mam] table cannot be added to it (is mcp_servers an inline table?)' });
    assert.deepEqual(toml.read('mcp_servers = 3\n', 'mcp_servers', 'mam'), { ok: false, why: 'its mcp_servers is not a table' });
    const reformatted = '[mcp_servers.mam]\ncommand = "node"\nargs = ["/opt/mam/dist/cli.js", "mcp", "--workspace", "/w"]\n';
    assert.equal(toml.remove(reformatted, 'mcp_servers', 'mam', SERVER, { separator: '', dropContainer: true }), undefined, 'not as written: left alone');
  });
});
