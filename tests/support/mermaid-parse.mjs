// Parses a Mermaid file with the real mermaid parser (npm `mermaid`, in a jsdom window), for
// tests/it/project.rs: exit 0 and `ok <diagram type>` when it parses, exit 1 and the parser's error
// otherwise. `.ci/run` copies it beside the packages it installs in `.ci/mermaid`.
import fs from 'fs';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
try { globalThis.navigator = dom.window.navigator; } catch (e) { /* read-only in newer Node */ }
globalThis.DOMParser = dom.window.DOMParser;
const { default: mermaid } = await import('mermaid');

const text = fs.readFileSync(process.argv[2], 'utf8');
try {
  const r = await mermaid.parse(text);
  console.log('ok', r.diagramType);
} catch (e) {
  console.log('error', e.message);
  process.exit(1);
}
