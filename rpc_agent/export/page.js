"use strict";
// The viewer of an exported rpc-agent session. Everything from the session is data: text goes
// into the DOM through textContent or through esc() before any markup is added, links only
// keep http(s)/mailto targets, and images are data: URLs built from validated base64.
(function () {
  const DATA = JSON.parse(document.getElementById("session-data").textContent);
  const NODES = DATA.nodes || [];
  const FILES = DATA.fileChanges || {};
  const N = NODES.length;
  const ROW_H = 24;
  const WINDOW = 60; // path entries rendered at first; older ones on request
  const MAX_GUTTER = 24; // tree levels drawn before the gutter is shifted
  const FOLD_LINES = 18;
  const FOLD_CHARS = 3000;

  // --- small helpers -----------------------------------------------------------------------
  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  function esc(s) { return String(s).replace(/[&<>"']/g, (c) => ESC[c]); }
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function fmtInt(n) { return Number(n || 0).toLocaleString("en-US"); }
  function fmtCost(c) {
    c = Number(c || 0);
    if (!c) return "$0";
    return "$" + (c < 0.01 ? c.toFixed(4) : c.toFixed(c < 10 ? 3 : 2));
  }
  function fmtTime(t) {
    if (t === undefined || t === null) return "";
    const d = typeof t === "number" ? new Date(t) : new Date(String(t));
    if (isNaN(d.getTime())) return "";
    return d.toISOString().replace("T", " ").slice(0, 19);
  }
  // Previews in the tree are one line of text: the commonest Markdown marks are dropped.
  function plain(s) {
    return String(s || "").replace(/```[\w+#.-]*/g, " ").replace(/\*\*|`/g, "").replace(/^#{1,6}\s+/gm, "");
  }
  function oneLine(s, n) {
    s = String(s || "").replace(/\s+/g, " ").trim();
    return s.length > n ? s.slice(0, n) + "…" : s;
  }

  // --- the tree ----------------------------------------------------------------------------
  const index = new Map(); // id -> node index
  const parent = new Int32Array(N).fill(-1);
  const kids = new Array(N);
  for (let i = 0; i < N; i++) index.set(NODES[i].entry.id, i);
  for (let i = 0; i < N; i++) {
    const p = NODES[i].parentId;
    const pi = p === null || p === undefined ? -1 : index.has(p) ? index.get(p) : -1;
    parent[i] = pi;
    if (pi >= 0) (kids[pi] || (kids[pi] = [])).push(i);
  }
  const leaf = DATA.leafId !== null && index.has(DATA.leafId) ? index.get(DATA.leafId) : -1;
  const onLeafPath = new Uint8Array(N);
  for (let i = leaf; i >= 0; i = parent[i]) onLeafPath[i] = 1;
  const roots = [];
  for (let i = 0; i < N; i++) if (parent[i] < 0) roots.push(i);

  // Display order: depth-first, but at a branch point the child that leads to the current
  // leaf (else the newest) is listed last and stays in its parent's column, while the other
  // children are side branches indented beneath the branch point. So the current branch reads
  // as one flat column from the root to the leaf, and a linear run of ten thousand entries is
  // ten thousand rows of one column, never ten thousand nested levels. Each side level
  // remembers whether another side branch follows it (the "│" that runs down beside it).
  const level = new Array(N).fill(null); // {more: bool, up: level|null, depth}
  const opens = new Uint8Array(N); // 1: first row of a side branch (├─), 2: of the last one (└─)
  const order = [];
  {
    const spineLast = (list) => {
      if (list.length < 2) return list;
      const k = list.findIndex((c) => onLeafPath[c]);
      if (k < 0 || k === list.length - 1) return list;
      return list.slice(0, k).concat(list.slice(k + 1), [list[k]]);
    };
    const branch = (list, base) => {
      const sides = list.length - 1;
      const depth = base ? base.depth + 1 : 1;
      for (let k = 0; k < sides; k++) {
        level[list[k]] = { more: k < sides - 1, up: base, depth };
        opens[list[k]] = k < sides - 1 ? 1 : 2;
      }
      level[list[sides]] = base;
    };
    const top = spineLast(roots);
    if (top.length) branch(top, null);
    const stack = top.slice().reverse();
    while (stack.length) {
      const i = stack.pop();
      order.push(i);
      const ks = kids[i];
      if (!ks) continue;
      const list = spineLast(ks);
      if (list.length === 1) level[list[0]] = level[i];
      else branch(list, level[i]);
      for (let k = list.length - 1; k >= 0; k--) stack.push(list[k]);
    }
  }
  function gutter(i) {
    const lv = level[i];
    if (!lv) return { text: "", depth: 0 };
    const cols = [];
    let l = lv;
    let first = true;
    while (l && cols.length < MAX_GUTTER) {
      if (first) cols.push(opens[i] === 1 ? "├─ " : opens[i] === 2 ? "└─ " : l.more ? "│  " : "   ");
      else cols.push(l.more ? "│  " : "   ");
      first = false;
      l = l.up;
    }
    return { text: cols.reverse().join(""), depth: lv.depth };
  }

  function pathTo(i) {
    const out = [];
    for (let j = i; j >= 0; j = parent[j]) out.push(j);
    return out.reverse();
  }

  // --- what a row says -----------------------------------------------------------------------
  function textOf(content) {
    if (typeof content === "string") return content;
    if (!Array.isArray(content)) return "";
    let s = "";
    for (const b of content) if (b && b.type === "text") s += (s ? " " : "") + b.text;
    return s;
  }
  function hasImage(content) {
    return Array.isArray(content) && content.some((b) => b && b.type === "image");
  }
  function toolArgSummary(name, args) {
    if (!args || typeof args !== "object") return "";
    const keys = ["command", "path", "file_path", "pattern", "query", "url"];
    for (const k of keys) if (typeof args[k] === "string") return args[k];
    try { return JSON.stringify(args); } catch (e) { return ""; }
  }
  const rowCache = new Map();
  function describe(i) {
    let d = rowCache.get(i);
    if (d) return d;
    const e = NODES[i].entry;
    const m = e.message || {};
    let kind = e.type, cls = "k-note", text = "", dim = false;
    if (e.type === "message") {
      const role = m.role;
      if (role === "user") {
        kind = "user"; cls = "k-user";
        text = textOf(m.content) + (hasImage(m.content) ? " [image]" : "");
      } else if (role === "assistant") {
        kind = "assistant"; cls = m.stopReason === "error" ? "k-error" : "k-assistant";
        text = textOf(m.content);
        const calls = (m.content || []).filter((b) => b && b.type === "toolCall");
        if (calls.length) {
          const c = calls.map((b) => "→ " + b.name + " " + oneLine(toolArgSummary(b.name, b.arguments), 60));
          text = text ? text + "  " + c.join("  ") : c.join("  ");
        }
        if (!text && (m.content || []).some((b) => b && b.type === "thinking")) { text = "(thinking)"; dim = true; }
        if (m.stopReason === "error" || m.stopReason === "aborted") text = "[" + m.stopReason + "] " + (m.errorMessage || text);
      } else if (role === "toolResult") {
        kind = "result"; cls = m.isError ? "k-error" : "k-tool";
        text = (m.isError ? "✗ " : "✓ ") + (m.toolName || "") + "  " + textOf(m.content);
        dim = !m.isError;
      } else if (role === "bashExecution") {
        kind = "bash"; cls = "k-tool"; text = "$ " + m.command;
      } else if (role === "custom") {
        kind = m.customType || "custom"; text = textOf(m.content);
      } else if (role === "branchSummary" || role === "compactionSummary") {
        kind = "summary"; cls = "k-summary"; text = m.summary;
      } else { kind = role || "message"; }
    } else if (e.type === "compaction") {
      kind = "compact"; cls = "k-compaction";
      text = "compacted " + fmtInt(e.tokensBefore) + " tokens: " + (e.summary || "");
    } else if (e.type === "branch_summary") {
      kind = "summary"; cls = "k-summary"; text = "branch summary: " + (e.summary || "");
    } else if (e.type === "model_change") {
      kind = "model"; text = e.modelId ? (e.provider ? e.provider + "/" : "") + e.modelId : e.model || ""; dim = true;
    } else if (e.type === "thinking_level_change") {
      kind = "thinking"; text = "level " + e.thinkingLevel; dim = true;
    } else if (e.type === "session_info") {
      kind = "name"; text = e.name || ""; dim = true;
    } else if (e.type === "custom_message") {
      kind = "custom"; text = (e.customType ? e.customType + ": " : "") + textOf(e.content);
    } else if (e.type === "custom") {
      kind = "custom"; text = e.customType || ""; dim = true;
    } else { text = e.type; dim = true; }
    d = { kind, cls, text: oneLine(plain(text), 160), dim };
    rowCache.set(i, d);
    return d;
  }
  let searchText = null; // lower-cased full text, built on the first search
  function fullText(i) {
    const e = NODES[i].entry;
    let s = describe(i).text + " " + (NODES[i].label || "") + " " + e.id;
    const m = e.message;
    if (m) {
      s += " " + textOf(m.content) + " " + (m.summary || "") + " " + (m.command || "") + " " + (m.output || "");
      for (const b of Array.isArray(m.content) ? m.content : []) {
        if (b && b.type === "toolCall") { try { s += " " + b.name + " " + JSON.stringify(b.arguments); } catch (x) { /* skip */ } }
        if (b && b.type === "thinking") s += " " + b.thinking;
      }
    }
    if (e.summary) s += " " + e.summary;
    return s.toLowerCase();
  }

  // --- the virtual tree list --------------------------------------------------------------------
  const treeBox = document.getElementById("tree");
  const treeInner = document.getElementById("tree-inner");
  const status = document.getElementById("tree-status");
  let rows = []; // node indexes listed, in order
  let filtered = false;
  let selected = -1;
  let selPath = new Uint8Array(N);

  function isTalk(i) {
    const e = NODES[i].entry;
    return e.type === "message" && e.message && (e.message.role === "user" || e.message.role === "assistant");
  }
  function applyFilter() {
    const q = document.getElementById("search").value.trim().toLowerCase();
    const show = document.getElementById("show").value;
    if (!q && show === "all") {
      rows = order;
      filtered = false;
    } else {
      if (q && !searchText) { searchText = new Array(N); for (let i = 0; i < N; i++) searchText[i] = fullText(i); }
      rows = [];
      for (const i of order) {
        if (show === "talk" && !isTalk(i)) continue;
        if (show === "labels" && !NODES[i].label) continue;
        if (q && searchText[i].indexOf(q) < 0) continue;
        rows.push(i);
      }
      filtered = true;
    }
    treeInner.style.height = rows.length * ROW_H + "px";
    status.textContent = (filtered ? fmtInt(rows.length) + " of " : "") + fmtInt(N) + " entries" +
      (leaf >= 0 ? " · leaf " + NODES[leaf].entry.id : "") + (filtered ? " · flat list while filtering" : "");
    drawRows(true);
  }
  let drawn = "";
  function drawRows(force) {
    const top = treeBox.scrollTop;
    const h = treeBox.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW_H) - 10);
    const last = Math.min(rows.length, Math.ceil((top + h) / ROW_H) + 10);
    const key = first + ":" + last + ":" + selected + ":" + rows.length;
    if (!force && key === drawn) return;
    drawn = key;
    const frag = document.createDocumentFragment();
    for (let r = first; r < last; r++) frag.appendChild(rowElement(rows[r], r));
    treeInner.replaceChildren(frag);
  }
  function rowElement(i, r) {
    const node = NODES[i];
    const d = describe(i);
    const row = el("div", "row");
    row.style.top = r * ROW_H + "px";
    row.dataset.i = String(i);
    row.dataset.id = node.entry.id;
    row.setAttribute("role", "treeitem");
    if (i === selected) { row.classList.add("sel"); row.setAttribute("aria-selected", "true"); }
    else if (selPath[i]) row.classList.add("onpath");
    if (!filtered) {
      const g = gutter(i);
      if (g.text) {
        const gut = el("span", "gut", g.text);
        if (g.depth > MAX_GUTTER) { gut.classList.add("deep"); gut.dataset.depth = String(g.depth); }
        row.appendChild(gut);
      }
    }
    row.appendChild(el("span", "kind " + d.cls, d.kind));
    row.appendChild(el("span", "txt" + (d.dim ? " dim" : ""), d.text || "(empty)"));
    if (node.label) row.appendChild(el("span", "pill label", node.label));
    const k = kids[i] ? kids[i].length : 0;
    if (k > 1) { const f = el("span", "pill fork", k + " branches"); f.title = k + " branches start here"; row.appendChild(f); }
    if (i === leaf) { const l = el("span", "pill leaf", "● leaf"); l.title = "The current leaf"; row.appendChild(l); }
    row.title = node.entry.id + "  " + fmtTime(node.entry.timestamp);
    return row;
  }
  let pending = false;
  treeBox.addEventListener("scroll", () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; drawRows(false); });
  });
  window.addEventListener("resize", () => drawRows(true));
  treeInner.addEventListener("click", (ev) => {
    const row = ev.target.closest(".row");
    if (row) select(Number(row.dataset.i), { scrollTree: false });
  });
  treeBox.addEventListener("keydown", (ev) => {
    if (ev.key !== "ArrowDown" && ev.key !== "ArrowUp" && ev.key !== "Home" && ev.key !== "End") return;
    ev.preventDefault();
    let r = rows.indexOf(selected);
    if (ev.key === "ArrowDown") r = Math.min(rows.length - 1, r + 1);
    else if (ev.key === "ArrowUp") r = Math.max(0, r - 1);
    else if (ev.key === "Home") r = 0;
    else r = rows.length - 1;
    if (r >= 0) select(rows[r], { scrollTree: true });
  });
  function scrollRowIntoView(i) {
    const r = rows.indexOf(i);
    if (r < 0) return;
    const top = r * ROW_H, h = treeBox.clientHeight;
    if (top < treeBox.scrollTop || top + ROW_H > treeBox.scrollTop + h) treeBox.scrollTop = Math.max(0, top - h / 2);
  }

  // --- Markdown -----------------------------------------------------------------------------------
  // Block structure from raw lines; every piece of text is escaped before markup is added.
  const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
  const LIST = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
  const TABLE_SEP = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;
  function md(src) {
    return mdBlocks(String(src || "").replace(/\r\n?/g, "\n").replace(/\u0000/g, "\ufffd").split("\n"));
  }
  function isBlockStart(line) {
    return FENCE.test(line) || /^ {0,3}#{1,6}\s/.test(line) || /^ {0,3}>/.test(line) || LIST.test(line) ||
      /^ {0,3}([-*_])(\s*\1){2,}\s*$/.test(line);
  }
  function mdBlocks(lines) {
    let out = "";
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if (!line.trim()) { i++; continue; }
      if ((m = FENCE.exec(line))) {
        const fence = m[1], lang = m[2];
        const body = [];
        i++;
        while (i < lines.length && !(lines[i].trim().startsWith(fence[0].repeat(fence.length)) && lines[i].trim().replace(/[`~]/g, "") === "")) body.push(lines[i++]);
        i++;
        out += codeBlock(body.join("\n"), lang);
        continue;
      }
      if ((m = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line))) {
        const n = m[1].length;
        out += "<h" + n + ">" + inline(m[2]) + "</h" + n + ">";
        i++;
        continue;
      }
      if (/^ {0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) { out += "<hr>"; i++; continue; }
      if (/^ {0,3}>/.test(line)) {
        const body = [];
        while (i < lines.length && /^ {0,3}>/.test(lines[i])) body.push(lines[i++].replace(/^ {0,3}> ?/, ""));
        out += "<blockquote>" + mdBlocks(body) + "</blockquote>";
        continue;
      }
      if ((m = LIST.exec(line))) {
        const ordered = /\d/.test(m[2]);
        const indent = m[1].length;
        const items = [];
        while (i < lines.length) {
          const l = lines[i];
          const lm = LIST.exec(l);
          if (lm && lm[1].length <= indent) {
            if (/\d/.test(lm[2]) !== ordered) break;
            items.push([lm[3]]);
            i++;
          } else if (l.trim() && /^\s/.test(l) && items.length) {
            items[items.length - 1].push(l.replace(new RegExp("^\\s{0," + (indent + 4) + "}"), ""));
            i++;
          } else if (!l.trim() && i + 1 < lines.length && /^\s+\S/.test(lines[i + 1]) && items.length) {
            items[items.length - 1].push("");
            i++;
          } else break;
        }
        const start = ordered ? parseInt(m[2], 10) : 1;
        out += ordered ? (start !== 1 ? '<ol start="' + start + '">' : "<ol>") : "<ul>";
        for (const it of items) {
          out += "<li>" + (it.length === 1 ? inline(it[0]) : inline(it[0]) + mdBlocks(it.slice(1))) + "</li>";
        }
        out += ordered ? "</ol>" : "</ul>";
        continue;
      }
      if (line.indexOf("|") >= 0 && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
        const cells = (l) => l.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
        out += "<table><thead><tr>" + cells(line).map((c) => "<th>" + inline(c) + "</th>").join("") + "</tr></thead><tbody>";
        i += 2;
        while (i < lines.length && lines[i].indexOf("|") >= 0 && lines[i].trim()) {
          out += "<tr>" + cells(lines[i]).map((c) => "<td>" + inline(c) + "</td>").join("") + "</tr>";
          i++;
        }
        out += "</tbody></table>";
        continue;
      }
      const para = [];
      while (i < lines.length && lines[i].trim() && !(para.length && isBlockStart(lines[i]))) para.push(lines[i++]);
      out += "<p>" + para.map(inline).join("<br>") + "</p>";
    }
    return out;
  }
  function safeHref(url) {
    const u = url.trim();
    if (/^(https?:|mailto:)/i.test(u)) return u;
    if (/^#[\w-]*$/.test(u)) return u;
    return null;
  }
  function inline(text) {
    const slots = [];
    const hold = (html) => "\u0000" + (slots.push(html) - 1) + "\u0000";
    let s = String(text);
    s = s.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_, t, code) => hold("<code>" + esc(code.replace(/^ (.*) $/, "$1")) + "</code>"));
    s = s.replace(/!?\[([^\]\n]*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)/g, (all, label, url) => {
      const href = safeHref(url);
      if (all[0] === "!") return hold('<span class="missing">[image ' + esc(label || url) + " not embedded]</span>");
      if (!href) return hold(esc(label));
      return hold('<a href="' + esc(href) + '" rel="noopener noreferrer" target="_blank">' + esc(label) + "</a>");
    });
    s = s.replace(/\bhttps?:\/\/[^\s<>()"']+[^\s<>()"'.,;:!?]/g, (url) =>
      hold('<a href="' + esc(url) + '" rel="noopener noreferrer" target="_blank">' + esc(url) + "</a>"));
    s = esc(s);
    s = s.replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<strong>$1</strong>");
    s = s.replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, "$1<strong>$2</strong>");
    s = s.replace(/(^|[^*\w])\*(?=[^\s*])([^*]*?[^\s*])\*(?!\*)/g, "$1<em>$2</em>");
    s = s.replace(/(^|[^\w])_(?=[^\s_])([^_]*?[^\s_])_(?!\w)/g, "$1<em>$2</em>");
    s = s.replace(/~~(?=\S)([\s\S]*?\S)~~/g, "<del>$1</del>");
    return s.replace(/\u0000(\d+)\u0000/g, (_, n) => slots[Number(n)]);
  }

  // --- code highlighting -------------------------------------------------------------------------
  const KW = {
    py: "and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case",
    js: "async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return static super switch this throw try typeof var void while with yield interface type enum implements private public protected readonly declare namespace abstract as",
    c: "auto break case char const continue default do double else enum extern float for goto if inline int long register return short signed sizeof static struct switch typedef union unsigned void volatile while class namespace template typename public private protected virtual override new delete this using bool",
    go: "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var",
    rs: "as async await break const continue crate else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while dyn",
    java: "abstract assert break case catch class const continue default do else enum extends final finally for if implements import instanceof interface native new package private protected public return static super switch synchronized this throw throws try volatile while var val fun when object",
    sh: "if then else elif fi case esac for while until do done in function select time export local readonly return exit set unset source alias echo cd",
    sql: "select from where and or not insert into values update set delete create table drop alter index join left right inner outer on group by order having limit offset as distinct union all null is in like between case when then else end primary key",
  };
  const LIT = new Set("true false null None True False nil undefined NaN Infinity self".split(" "));
  const LANGS = {
    python: "py", py: "py", javascript: "js", js: "js", jsx: "js", ts: "js", tsx: "js", typescript: "js", mjs: "js",
    json: "json", jsonc: "js", c: "c", h: "c", cpp: "c", cc: "c", hpp: "c", "c++": "c", cs: "java", csharp: "java",
    go: "go", golang: "go", rust: "rs", rs: "rs", java: "java", kotlin: "java", kt: "java", scala: "java", swift: "java",
    bash: "sh", sh: "sh", shell: "sh", zsh: "sh", console: "sh", shellsession: "sh", toml: "conf", yaml: "conf", yml: "conf",
    ini: "conf", dockerfile: "sh", makefile: "sh", make: "sh", rb: "conf", ruby: "conf", sql: "sql", diff: "diff", patch: "diff",
    css: "css", scss: "css", html: "html", xml: "html", svg: "html", vue: "html",
  };
  const kwSets = {};
  for (const k in KW) kwSets[k] = new Set(KW[k].split(" "));
  const HASH_COMMENT = { py: 1, sh: 1, conf: 1 };
  function tokenizer(fam) {
    const parts = [];
    if (fam === "html") parts.push("<!--[\\s\\S]*?-->");
    if (fam === "css" || fam === "c" || fam === "js" || fam === "go" || fam === "rs" || fam === "java") parts.push("/\\*[\\s\\S]*?\\*/");
    if (fam === "c" || fam === "js" || fam === "go" || fam === "rs" || fam === "java") parts.push("//[^\\n]*");
    if (HASH_COMMENT[fam]) parts.push("#[^\\n]*");
    if (fam === "sql") parts.push("--[^\\n]*");
    if (fam === "py") parts.push('"""[\\s\\S]*?"""', "'''[\\s\\S]*?'''");
    parts.push('"(?:\\\\.|[^"\\\\\\n])*"');
    if (fam !== "rs" && fam !== "html") parts.push("'(?:\\\\.|[^'\\\\\\n])*'");
    if (fam === "js" || fam === "go" || fam === "sh") parts.push("`(?:\\\\.|[^`\\\\])*`");
    parts.push("\\b(?:0[xX][0-9a-fA-F_]+|\\d[\\d_]*(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)\\b");
    parts.push("[A-Za-z_$][\\w$]*");
    return new RegExp(parts.join("|"), "g");
  }
  const tokenizers = {};
  function highlight(code, lang) {
    const fam = LANGS[String(lang || "").toLowerCase()];
    if (!fam || code.length > 200000) return esc(code);
    if (fam === "diff") {
      return code.split("\n").map((l) => {
        const c = /^\+/.test(l) ? "hl-add" : /^-/.test(l) ? "hl-del" : /^@@/.test(l) ? "hl-hunk" : "";
        return c ? '<span class="' + c + '">' + esc(l) + "</span>" : esc(l);
      }).join("\n");
    }
    const re = tokenizers[fam] || (tokenizers[fam] = tokenizer(fam));
    const kws = kwSets[fam] || null;
    re.lastIndex = 0;
    let out = "", last = 0, m;
    while ((m = re.exec(code))) {
      const t = m[0];
      out += esc(code.slice(last, m.index));
      last = m.index + t.length;
      const c0 = t[0];
      let cls = "";
      if (c0 === "/" || c0 === "#" || (c0 === "-" && t[1] === "-") || c0 === "<") cls = "hl-c";
      else if (c0 === '"' || c0 === "'" || c0 === "`") cls = "hl-s";
      else if (c0 >= "0" && c0 <= "9") cls = "hl-n";
      else if (kws && kws.has(fam === "sql" ? t.toLowerCase() : t)) cls = "hl-k";
      else if (LIT.has(t)) cls = "hl-l";
      else if (code[last] === "(") cls = "hl-f";
      out += cls ? '<span class="' + cls + '">' + esc(t) + "</span>" : esc(t);
    }
    return out + esc(code.slice(last));
  }
  function codeBlock(code, lang) {
    return '<div class="codewrap">' + (lang ? '<span class="lang">' + esc(lang) + "</span>" : "") +
      "<pre><code>" + highlight(code, lang) + "</code></pre></div>";
  }
  function langOfPath(p) {
    const m = /\.([\w+]+)$/.exec(String(p || ""));
    return m ? m[1].toLowerCase() : "";
  }

  // --- rendering a path -----------------------------------------------------------------------
  function htmlDiv(cls, html) { const d = el("div", cls); d.innerHTML = html; return d; }
  function folded(text, lang, wrap) {
    text = String(text == null ? "" : text);
    const box = el("div");
    const lines = text.split("\n");
    const pre = (t) => { const p = el("pre", wrap ? "wrap" : ""); p.innerHTML = "<code>" + highlight(t, lang) + "</code>"; return p; };
    if (lines.length <= FOLD_LINES + 4 && text.length <= FOLD_CHARS) { box.appendChild(pre(text)); return box; }
    let head = lines.slice(0, FOLD_LINES).join("\n");
    if (head.length > FOLD_CHARS) head = head.slice(0, FOLD_CHARS);
    box.appendChild(pre(head));
    const det = el("details", "fold");
    const rest = text.slice(head.length).replace(/^\n/, "");
    const restLines = rest.split("\n").length;
    det.appendChild(el("summary", null, "Show " + fmtInt(restLines) + " more line" + (restLines === 1 ? "" : "s") +
      " (" + fmtInt(text.length) + " characters in all)"));
    let filled = false;
    det.addEventListener("toggle", () => { if (det.open && !filled) { filled = true; det.appendChild(pre(rest)); } });
    box.appendChild(det);
    return box;
  }
  const IMAGE_TYPES = /^image\/(png|jpeg|jpg|gif|webp|bmp|svg\+xml)$/;
  function image(block) {
    const data = String(block.data || "");
    const mime = String(block.mimeType || "");
    if (data.startsWith("blob:")) return el("div", "missing", "[image not found in the blob store: " + data + "]");
    if (!IMAGE_TYPES.test(mime) || !/^[A-Za-z0-9+/=\s]*$/.test(data)) return el("div", "missing", "[image of type " + mime + " not shown]");
    const img = el("img", "inline");
    img.alt = "image (" + mime + ")";
    img.src = "data:" + mime + ";base64," + data.replace(/\s+/g, "");
    return img;
  }
  function content(box, c) {
    if (typeof c === "string") { box.appendChild(htmlDiv("md", md(c))); return; }
    if (!Array.isArray(c)) return;
    for (const b of c) {
      if (!b) continue;
      if (b.type === "text") box.appendChild(htmlDiv("md", md(b.text)));
      else if (b.type === "image") box.appendChild(image(b));
    }
  }
  function plainContent(box, c, lang) {
    if (typeof c === "string") { box.appendChild(folded(c, lang, true)); return; }
    if (!Array.isArray(c)) return;
    for (const b of c) {
      if (!b) continue;
      if (b.type === "text") box.appendChild(folded(b.text, lang, true));
      else if (b.type === "image") box.appendChild(image(b));
    }
  }
  function who(role, cls, i, extra) {
    const h = el("div", "who");
    h.appendChild(el("span", "role " + cls, role));
    if (extra) h.appendChild(el("span", null, extra));
    h.appendChild(el("span", "sp"));
    const node = NODES[i];
    if (node.label) h.appendChild(el("span", "pill label", node.label));
    if (i === leaf) h.appendChild(el("span", "pill leaf", "● leaf"));
    h.appendChild(el("span", null, fmtTime(node.entry.timestamp)));
    const id = el("span", "id", node.entry.id);
    id.title = "Select this entry in the tree";
    id.dataset.select = String(i);
    h.appendChild(id);
    return h;
  }
  function usageLine(m) {
    const u = m.usage;
    if (!u) return null;
    const c = (u.cost && u.cost.total) || 0;
    const parts = ["in " + fmtInt(u.input), "out " + fmtInt(u.output)];
    if (u.cacheRead) parts.push("cache read " + fmtInt(u.cacheRead));
    if (u.cacheWrite) parts.push("cache write " + fmtInt(u.cacheWrite));
    parts.push(fmtCost(c));
    if (m.stopReason && m.stopReason !== "stop" && m.stopReason !== "toolUse") parts.push("stop: " + m.stopReason);
    return el("div", "usage", parts.join(" · "));
  }
  function toolCallBox(b, result, resultIndex) {
    const box = el("div", "tool");
    const head = el("div", "head");
    head.appendChild(el("span", "name", b.name));
    const args = b.arguments || {};
    head.appendChild(el("span", "arg", oneLine(toolArgSummary(b.name, args), 200)));
    const st = el("span", "st");
    if (!result) { st.textContent = "no result on this path"; st.classList.add("pending"); }
    else if (result.isError) { st.textContent = "error"; box.classList.add("err"); }
    else { st.textContent = "ok"; st.classList.add("ok"); }
    head.appendChild(st);
    box.appendChild(head);
    const body = el("div", "body");
    const name = String(b.name || "");
    if (name === "bash" && typeof args.command === "string") {
      if (args.command.indexOf("\n") >= 0 || args.command.length > 200) body.appendChild(folded(args.command, "bash", true));
      const rest = Object.assign({}, args); delete rest.command;
      if (Object.keys(rest).length) body.appendChild(folded(JSON.stringify(rest, null, 2), "json", true));
    } else if (name === "edit" && (typeof args.oldText === "string" || Array.isArray(args.edits))) {
      const edits = Array.isArray(args.edits) ? args.edits : [args];
      for (const ed of edits) {
        const o = el("div", "diff-old"); o.appendChild(el("div", "sub", "replace")); o.appendChild(folded(ed.oldText, langOfPath(args.path)));
        const n = el("div", "diff-new"); n.appendChild(el("div", "sub", "with")); n.appendChild(folded(ed.newText, langOfPath(args.path)));
        body.appendChild(o); body.appendChild(n);
      }
    } else if (name === "write" && typeof args.content === "string") {
      body.appendChild(folded(args.content, langOfPath(args.path)));
    } else if (Object.keys(args).length && !(Object.keys(args).length === 1 && typeof toolArgSummary(name, args) === "string" && (args.path || args.pattern))) {
      body.appendChild(folded(JSON.stringify(args, null, 2), "json", true));
    }
    if (body.childNodes.length) box.appendChild(body);
    if (result) {
      const r = el("div", "result");
      r.id = "e-" + NODES[resultIndex].entry.id;
      r.appendChild(el("div", "sub", "result · " + fmtTime(NODES[resultIndex].entry.timestamp) + " · " + NODES[resultIndex].entry.id));
      const lang = name === "read" ? langOfPath(args.path) : "";
      plainContent(r, result.content, lang);
      withFiles(r, NODES[resultIndex].entry.id);
      box.appendChild(r);
    }
    return box;
  }
  function filesBox(entryId) {
    const list = FILES[entryId];
    if (!list || !list.length) return null;
    const box = el("details", "files");
    box.appendChild(el("summary", null, "Files changed · " + list.length));
    for (const f of list) {
      const row = el("details", "file");
      row.appendChild(el("summary", null, f.status + " " + f.path + (f.binary ? " (binary)" : "") + (f.truncated ? " (diff cut)" : "")));
      if (f.diff) row.appendChild(folded(f.diff, "diff", true));
      box.appendChild(row);
    }
    return box;
  }
  function withFiles(box, entryId) {
    const files = filesBox(entryId);
    if (files) box.appendChild(files);
    return box;
  }
  function renderEntry(i, pairedResults, skip) {
    const e = NODES[i].entry;
    const m = e.message;
    if (e.type === "message" && m) {
      if (m.role === "user") {
        const box = el("div", "msg user"); box.appendChild(who("User", "k-user", i)); content(box, m.content); return withFiles(box, e.id);
      }
      if (m.role === "assistant") {
        const err = m.stopReason === "error" || m.stopReason === "aborted";
        const box = el("div", "msg assistant" + (err ? " error" : ""));
        box.appendChild(who("Assistant", "k-assistant", i, [m.provider, m.model].filter(Boolean).join(" · ")));
        for (const b of m.content || []) {
          if (!b) continue;
          if (b.type === "text") box.appendChild(htmlDiv("md", md(b.text)));
          else if (b.type === "thinking") {
            const d = el("details", "thinking");
            const lines = String(b.thinking || "").split("\n").length;
            d.appendChild(el("summary", null, b.redacted ? "Thinking (redacted)" : "Thinking · " + fmtInt(lines) + " line" + (lines === 1 ? "" : "s")));
            if (!b.redacted) d.appendChild(htmlDiv("md", md(b.thinking)));
            box.appendChild(d);
          } else if (b.type === "toolCall") {
            const ri = pairedResults.get(b.id);
            box.appendChild(toolCallBox(b, ri !== undefined ? NODES[ri].entry.message : null, ri));
          }
        }
        if (m.errorMessage) box.appendChild(el("div", "errmsg", m.errorMessage));
        const u = usageLine(m);
        if (u) box.appendChild(u);
        return box;
      }
      if (m.role === "toolResult") {
        if (skip.has(i)) return null;
        const box = el("div", "msg toolResult" + (m.isError ? " error" : ""));
        box.appendChild(who("Tool result", m.isError ? "k-error" : "k-tool", i, m.toolName));
        plainContent(box, m.content, "");
        return withFiles(box, e.id);
      }
      if (m.role === "bashExecution") {
        const box = el("div", "msg bash");
        box.appendChild(who("Shell", "k-tool", i, "exit " + (m.exitCode === null || m.exitCode === undefined ? "?" : m.exitCode) + (m.cancelled ? " · cancelled" : "")));
        box.appendChild(folded("$ " + m.command, "bash", true));
        box.appendChild(folded(m.output || "", "", true));
        return withFiles(box, e.id);
      }
      if (m.role === "branchSummary" || m.role === "compactionSummary") {
        const box = el("div", "msg branchSummary");
        box.appendChild(who(m.role === "branchSummary" ? "Branch summary" : "Compaction summary", "k-summary", i));
        box.appendChild(htmlDiv("md", md(m.summary)));
        return box;
      }
      const box = el("div", "msg");
      box.appendChild(who(m.role === "custom" ? m.customType || "custom" : String(m.role), "k-note", i));
      content(box, m.content);
      return box;
    }
    if (e.type === "compaction") {
      const box = el("div", "msg compaction");
      box.appendChild(who("Compaction", "k-compaction", i, fmtInt(e.tokensBefore) + " tokens summarised · kept from " + e.firstKeptEntryId));
      const d = el("details"); d.open = true;
      d.appendChild(el("summary", null, "Summary the model saw instead of the earlier messages"));
      d.appendChild(htmlDiv("md", md(e.summary)));
      box.appendChild(d);
      return box;
    }
    if (e.type === "branch_summary") {
      const box = el("div", "msg branchSummary");
      const from = index.has(e.fromId) ? index.get(e.fromId) : -1;
      box.appendChild(who("Branch summary", "k-summary", i, "of the branch left at " + e.fromId));
      box.appendChild(htmlDiv("md", md(e.summary)));
      if (from >= 0) { const s = el("span", "goto", "→ go to " + e.fromId); s.dataset.select = String(from); box.appendChild(s); }
      return box;
    }
    if (e.type === "custom_message") {
      const box = el("div", "msg");
      box.appendChild(who(e.customType || "custom", "k-note", i, e.display === false ? "hidden from the user" : ""));
      content(box, e.content);
      return box;
    }
    let text;
    if (e.type === "model_change") text = "Model set to " + (e.modelId ? (e.provider ? e.provider + "/" : "") + e.modelId : e.model);
    else if (e.type === "thinking_level_change") text = "Thinking level set to " + e.thinkingLevel;
    else if (e.type === "session_info") text = "Session named “" + (e.name || "") + "”";
    else if (e.type === "custom") text = "Extension data: " + (e.customType || "");
    else text = "Entry of type " + e.type;
    const n = el("div", "note", text + " · " + fmtTime(e.timestamp));
    return n;
  }

  const pathBox = document.getElementById("path");
  const pathHead = document.getElementById("path-head");
  let shownFrom = 0;
  let currentPath = [];
  function renderPath(i) {
    const path = pathTo(i);
    currentPath = path;
    drawPath(true);
    const head = [];
    let cost = 0, input = 0, output = 0, turns = 0;
    for (const j of path) {
      const m = NODES[j].entry.message;
      if (m && m.role === "assistant" && m.usage) {
        turns++; input += m.usage.input || 0; output += m.usage.output || 0; cost += (m.usage.cost && m.usage.cost.total) || 0;
      }
    }
    head.push(["Path to", NODES[i].entry.id], ["entries", fmtInt(path.length)], ["assistant turns", fmtInt(turns)],
      ["tokens in/out", fmtInt(input) + " / " + fmtInt(output)], ["cost", fmtCost(cost)]);
    if (i !== leaf && leaf >= 0) head.push(["", onLeafPath[i] ? "on the current branch" : "on another branch"]);
    pathHead.replaceChildren(...head.map(([k, v]) => { const s = el("span"); if (k) s.appendChild(document.createTextNode(k + " ")); s.appendChild(el("b", null, v)); return s; }));
  }
  // Tool results are shown inside the call they answer. A window of the path never starts
  // between a call and its results, so a result is always drawn together with its call.
  let paired = new Map(), skip = new Set();
  function pairResults(path) {
    const calls = new Map();
    paired = new Map();
    skip = new Set();
    for (let k = 0; k < path.length; k++) {
      const m = NODES[path[k]].entry.message;
      if (!m) continue;
      if (m.role === "assistant") {
        for (const b of m.content || []) if (b && b.type === "toolCall") calls.set(b.id, k);
      } else if (m.role === "toolResult" && calls.has(m.toolCallId) && !paired.has(m.toolCallId)) {
        paired.set(m.toolCallId, path[k]);
        skip.add(path[k]);
      }
    }
    // A path that ends at a tool call still shows the results that answer it right below.
    const target = path[path.length - 1];
    for (let j = target, n = 0; kids[j] && n < 64; n++) {
      j = kids[j][0];
      const m = NODES[j].entry.message;
      if (!m || m.role !== "toolResult") break;
      if (calls.has(m.toolCallId) && !paired.has(m.toolCallId)) paired.set(m.toolCallId, j);
    }
  }
  function windowStart(k) {
    while (k > 0 && skip.has(currentPath[k])) k--;
    return k;
  }
  function entriesFragment(from, to, lazy) {
    const frag = document.createDocumentFragment();
    for (let k = from; k < to; k++) {
      const j = currentPath[k];
      const node = renderEntry(j, paired, skip);
      if (node) {
        node.id = "e-" + NODES[j].entry.id;
        if (lazy) node.classList.add("lazy");
        frag.appendChild(node);
      }
    }
    return frag;
  }
  function moreBar() {
    const more = el("div", "more");
    more.appendChild(el("span", "count"));
    more.appendChild(document.createTextNode(" "));
    const b1 = el("button", "earlier");
    b1.type = "button";
    b1.addEventListener("click", () => showEarlier(WINDOW * 2));
    more.appendChild(b1);
    more.appendChild(document.createTextNode(" "));
    const b2 = el("button", "all", "Show all");
    b2.type = "button";
    b2.addEventListener("click", () => showAll());
    more.appendChild(b2);
    return more;
  }
  function updateMoreBar() {
    let more = pathBox.querySelector(".more");
    if (shownFrom === 0) { if (more) more.remove(); return; }
    if (!more) { more = moreBar(); pathBox.prepend(more); }
    more.querySelector(".count").textContent = fmtInt(shownFrom) + " earlier entr" + (shownFrom === 1 ? "y" : "ies") + " on this path not shown.";
    more.querySelector(".earlier").textContent = "Show " + fmtInt(Math.min(WINDOW * 2, shownFrom)) + " more";
    more.querySelector(".all").hidden = shownFrom <= WINDOW * 2;
  }
  function showEarlier(count) {
    const from = windowStart(Math.max(0, shownFrom - count));
    if (from === shownFrom) return;
    // Earlier entries are not laid out while off screen (content-visibility), and the
    // browser's scroll anchoring keeps what is on screen in place as they are added above.
    const frag = entriesFragment(from, shownFrom, true);
    const more = pathBox.querySelector(".more");
    pathBox.insertBefore(frag, more ? more.nextSibling : pathBox.firstChild);
    shownFrom = from;
    updateMoreBar();
  }
  let allTimer = 0;
  function showAll() {
    // In slices, so that a path of thousands of entries never blocks the page for long.
    const path = currentPath;
    const step = () => {
      if (path !== currentPath || shownFrom === 0) return;
      showEarlier(400);
      allTimer = setTimeout(step, 0);
    };
    clearTimeout(allTimer);
    step();
  }
  function drawPath(scrollToTarget) {
    const path = currentPath;
    const target = path[path.length - 1];
    clearTimeout(allTimer);
    pairResults(path);
    shownFrom = windowStart(Math.max(0, path.length - WINDOW));
    pathBox.replaceChildren(entriesFragment(shownFrom, path.length));
    updateMoreBar();
    const targetEl = document.getElementById("e-" + NODES[target].entry.id);
    if (targetEl) {
      targetEl.classList.add("target");
      if (scrollToTarget) {
        // The clicked entry at the bottom with the path that led to it above, when it fits;
        // a tool result sits inside the message of its call, which is shown whole if it fits.
        const room = document.getElementById("main").clientHeight * 0.8;
        const box = targetEl.closest(".msg");
        const shown = box && box !== targetEl && box.offsetHeight < room ? box : targetEl;
        const block = shown.offsetHeight < room ? "end" : "start";
        shown.scrollIntoView({ block });
        // Images decode after this; once they have their height, align again (unless the
        // reader has scrolled meanwhile).
        const main = document.getElementById("main");
        const at = main.scrollTop;
        const pending = Array.from(pathBox.querySelectorAll("img")).filter((img) => !img.complete);
        if (pending.length) {
          Promise.all(pending.map((img) => img.decode().catch(() => null))).then(() => {
            if (currentPath === path && main.scrollTop === at) shown.scrollIntoView({ block });
          });
        }
      }
    }
  }
  pathBox.addEventListener("click", (ev) => {
    const t = ev.target.closest("[data-select]");
    if (t) select(Number(t.dataset.select), { scrollTree: true });
  });

  function select(i, opts) {
    if (i < 0 || i >= N) return;
    selected = i;
    selPath = new Uint8Array(N);
    for (let j = i; j >= 0; j = parent[j]) selPath[j] = 1;
    if (opts && opts.scrollTree) scrollRowIntoView(i);
    drawRows(true);
    renderPath(i);
    const id = NODES[i].entry.id;
    if (location.hash !== "#" + id) history.replaceState(null, "", "#" + id);
    document.body.dataset.selected = id;
  }

  // --- page frame -------------------------------------------------------------------------------
  document.getElementById("title").textContent = DATA.title || "Session";
  {
    const s = DATA.session || {};
    let cost = 0, turns = 0, branches = 0;
    for (let i = 0; i < N; i++) {
      const m = NODES[i].entry.message;
      if (m && m.role === "assistant" && m.usage) { turns++; cost += (m.usage.cost && m.usage.cost.total) || 0; }
      if (kids[i] && kids[i].length > 1) branches++;
    }
    const meta = [["entries", fmtInt(N)], ["branch points", fmtInt(branches)], ["assistant turns", fmtInt(turns)],
      ["total cost", fmtCost(cost)], ["cwd", s.cwd || ""], ["started", fmtTime(s.timestamp)], ["session", s.id || ""]];
    document.getElementById("meta").replaceChildren(...meta.map(([k, v]) => { const x = el("span"); x.appendChild(document.createTextNode(k + " ")); x.appendChild(el("b", null, v)); return x; }));
    document.getElementById("meta").title = (DATA.generator || "") + " · exported " + fmtTime(DATA.exportedAt) + (s.file ? " · " + s.file : "");
  }
  let filterTimer = 0;
  document.getElementById("search").addEventListener("input", () => { clearTimeout(filterTimer); filterTimer = setTimeout(() => { applyFilter(); if (selected >= 0) scrollRowIntoView(selected); }, 150); });
  document.getElementById("show").addEventListener("change", () => { applyFilter(); if (selected >= 0) scrollRowIntoView(selected); });
  document.getElementById("to-leaf").addEventListener("click", () => { if (leaf >= 0) select(leaf, { scrollTree: true }); });
  {
    const side = document.getElementById("side");
    const rz = document.getElementById("resizer");
    rz.addEventListener("mousedown", (ev) => {
      ev.preventDefault();
      const move = (e) => { side.style.width = Math.max(220, e.clientX) + "px"; drawRows(true); };
      const up = () => { document.removeEventListener("mousemove", move); document.removeEventListener("mouseup", up); };
      document.addEventListener("mousemove", move);
      document.addEventListener("mouseup", up);
    });
  }
  applyFilter();
  if (N === 0) {
    pathBox.replaceChildren(el("div", "empty", "This session has no entries."));
  } else {
    let wanted = location.hash.slice(1);
    try { wanted = decodeURIComponent(wanted); } catch (e) { /* a hand-typed hash: use it as it is */ }
    const start = index.has(wanted) ? index.get(wanted) : leaf >= 0 ? leaf : N - 1;
    select(start, { scrollTree: true });
  }
  document.body.dataset.ready = "1";
})();
