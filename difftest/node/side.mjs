// The openai npm package's side of the differential suite: each `fn_browser` case of the file given
// (placeholders already resolved by run.py, with the fixture's refs in `known_refs`) runs through the
// package's own BrowserToolset over a fake driver of the fixture pages, one call at a time as its
// runner does, skipping after a failed call. One JSON line per case on stdout.
import { readFileSync } from 'node:fs';
import { BROWSER_MEMBERS, BrowserError, BrowserToolset } from 'openai/helpers/browser';

const PAGE_PHRASES = new Set(['Difftest form', 'Submit', 'Name', 'Agree', 'Colour', 'Bottom of the page']);
const WHITE_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4//8/AAX+Av4N70a4AAAAAElFTkSuQmCC';

function reachable(url, base) {
  if (url === 'about:blank') return true;
  try {
    const parsed = new URL(url);
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.origin === base;
  } catch {
    return false;
  }
}

function titleOf(url) {
  if (typeof url !== 'string') return '';
  if (url.endsWith('/page2.html')) return 'Second page';
  if (url.endsWith('/form.html')) return 'Difftest form';
  return '';
}

class FakeDriver {
  constructor(startUrl, base, knownRefs) {
    this.base = base;
    this.knownRefs = new Set(knownRefs);
    this.tabs = [{ id: 'tab-0', title: titleOf(startUrl), url: startUrl, active: true }];
    this.next = 1;
    this.changes = [];
    this.acted = 0;
    // What hands' Chromium driver implements: every member but the file transfers.
    for (const name of BROWSER_MEMBERS) {
      if (!['list_tabs', 'upload_file', 'download_file'].includes(name)) this[name] = (args) => this.act(name, args);
    }
  }

  state() {
    return {
      tabs: this.tabs.map((t) => ({ ...t })),
      observation: {
        version: 1,
        sequence: this.changes.length,
        dropped_changes: 0,
        title_truncated: false,
        changes: this.changes.map((c, i) => ({ ...c, sequence: i + 1 })),
      },
    };
  }

  tabById(id) {
    if (!id) return this.tabs.find((t) => t.active);
    return this.tabs.find((t) => t.id === id);
  }

  report(withElements = true) {
    const elements = withElements ?
      [
        { ref: 'ref_Name', role: 'textbox', label: 'Name', value: '' },
        { ref: 'ref_Agree', role: 'checkbox', label: 'Agree', checked: false },
        {
          ref: 'ref_Colour', role: 'combobox', label: 'Colour', value: 'r',
          options: [{ label: 'Red', value: 'r' }, { label: 'Green', value: 'g' }, { label: 'Blue', value: 'b' }],
        },
        { ref: 'ref_Submit', role: 'button', label: 'Submit' },
      ]
    : [];
    return { version: 1, text: 'Difftest form', elements, omitted: [] };
  }

  act(name, args) {
    this.acted += 1;
    let tab;
    if (!['new_tab', 'switch_tab', 'close_tab', 'upload_file', 'download_file'].includes(name)) {
      tab = this.tabById(args.tab_id);
      if (!tab) throw new BrowserError('That tab is not open.');
    }
    if (['click', 'hover', 'scroll_to', 'select_option', 'set_checked', 'type'].includes(name)) {
      const ref = args.target;
      if (ref !== null && ref !== undefined && !this.knownRefs.has(ref)) {
        throw new BrowserError('Unknown ref: read the page again.');
      }
    }
    switch (name) {
      case 'navigate':
        if (!reachable(args.url, this.base)) throw new BrowserError('Navigation failed: the page could not be reached.');
        tab.url = args.url;
        tab.title = titleOf(args.url);
        return null;
      case 'new_tab': {
        if (args.url !== null && !reachable(args.url, this.base)) {
          throw new BrowserError('Navigation failed: the page could not be reached.');
        }
        for (const t of this.tabs) t.active = false;
        const opened = { id: `tab-${this.next++}`, title: titleOf(args.url), url: args.url ?? 'about:blank', active: true };
        this.tabs.push(opened);
        this.changes.push({ type: 'tab_opened', tab_id: opened.id });
        return null;
      }
      case 'switch_tab': {
        const target = args.tab_id ? this.tabById(args.tab_id) : undefined;
        if (!target) throw new BrowserError('That tab is not open.');
        for (const t of this.tabs) t.active = t === target;
        return null;
      }
      case 'close_tab': {
        const target = args.tab_id ? this.tabById(args.tab_id) : undefined;
        if (!target) throw new BrowserError('That tab is not open.');
        this.tabs = this.tabs.filter((t) => t !== target);
        if (target.active && this.tabs.length) this.tabs[this.tabs.length - 1].active = true;
        this.changes.push({ type: 'tab_closed', tab_id: target.id });
        return null;
      }
      case 'read_page':
      case 'find':
        return this.report();
      case 'read_page_scoped':
        if (args.root !== null) throw new BrowserError('Unknown scope.');
        return { ...this.report(), scopes: [] };
      case 'get_page_text':
      case 'read_diagnostics':
        return this.report(false);
      case 'screenshot':
      case 'zoom':
        return { type: 'input_image', image_url: `data:image/png;base64,${WHITE_PNG}` };
      case 'run_script':
        return 'undefined';
      case 'upload_file':
      case 'download_file':
        return { version: 1, status: 'refused', effect: 'none', cleanup: 'not_started' };
      case 'wait_for':
        if (!PAGE_PHRASES.has(args.text.split(/\s+/).filter(Boolean).join(' '))) {
          throw new BrowserError('The text did not appear before the timeout.');
        }
        return null;
      default:
        return null;
    }
  }
}

function originOf(url) {
  try {
    return new URL(url).origin.toLowerCase();
  } catch {
    return '';
  }
}

async function runCase(testCase) {
  const config = testCase.config ?? {};
  const deny = config.deny ?? [];
  const allow = config.allow_origins;
  const driver = new FakeDriver(testCase.start_url, testCase.base, testCase.known_refs);
  const options = {
    confirm: (context) => !deny.includes(context.member),
    urlPolicy: (_context, url) =>
      allow === null || allow === undefined || allow.map((a) => a.toLowerCase().replace(/\/$/, '')).includes(originOf(url)),
  };
  if (config.members != null) options.members = config.members;
  if (config.additional_members != null) options.additionalMembers = config.additional_members;
  if (config.confirm_reads != null) options.confirmReads = config.confirm_reads;
  let toolset;
  try {
    toolset = new BrowserToolset(driver, options);
  } catch (error) {
    return { config_error: `${error.name}: ${error.message}` };
  }
  const outputs = [];
  let failed = false;
  for (const raw of testCase.calls) {
    const call = { type: 'function_call', call_id: raw.call_id, name: raw.name, arguments: raw.arguments, status: 'completed' };
    const before = driver.acted;
    try {
      const { output, ok } = await toolset.executeWithStatus(call, undefined, failed);
      failed ||= !ok;
      outputs.push({ ...output, acted: driver.acted > before });
    } catch (error) {
      failed = true;
      outputs.push({ call_id: raw.call_id, raised: `${error.name}: ${error.message}`, acted: driver.acted > before });
    }
  }
  return { tools: toolset.tools(), outputs };
}

const lines = readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l.trim());
for (const line of lines) {
  const testCase = JSON.parse(line);
  let answer;
  try {
    answer = await runCase(testCase);
  } catch (error) {
    answer = { harness_error: `${error.name}: ${error.message}` };
  }
  answer.id = testCase.id;
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
