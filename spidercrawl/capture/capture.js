// spidercrawl page capture: runs inside the rendered page (page.evaluate) and returns
// the page's text blocks and metadata as one JSON-serialisable object.
//
// A *text block* is the closest block-level ancestor (itself included) of a visible,
// non-blank text node. Inline elements (a, em, span, inline-block...) fold into their
// block. Invisible text is skipped: display:none / visibility:hidden / opacity:0
// (checkVisibility), zero-size boxes (sr-only), and boxes entirely off the page (skip
// links at negative coordinates). Field names follow the ziyan-spider data so the same
// learning code reads both. The script also marks the DOM it leaves behind:
// data-sc-block="i" on block i and data-sc-hidden on elements whose text was skipped,
// so that the serialised HTML can be lined up with the blocks later (text density).
({ maxHtmlChars, maxBlocks, consentSelector }) => {
  // Visual properties recorded per block when they differ from <body>'s value.
  const VISUAL_PROPERTIES = [
    "font-family", "font-size", "font-style", "font-weight", "font-variant",
    "line-height", "letter-spacing", "word-spacing", "text-align", "text-decoration-line",
    "text-transform", "text-indent", "text-shadow", "white-space", "vertical-align",
    "color", "background-color", "background-image", "opacity", "box-shadow",
    "border-top-width", "border-right-width", "border-bottom-width", "border-left-width",
    "border-top-style", "border-right-style", "border-bottom-style", "border-left-style",
    "border-top-color", "border-right-color", "border-bottom-color", "border-left-color",
    "margin-top", "margin-right", "margin-bottom", "margin-left",
    "padding-top", "padding-right", "padding-bottom", "padding-left",
    "display", "position", "float", "clear", "overflow", "z-index", "cursor",
    "list-style-type", "list-style-position", "max-width", "min-height",
  ];
  const SKIPPED_TAGS = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "TITLE",
    "SVG", "MATH", "IFRAME", "OBJECT", "CANVAS", "SELECT", "OPTION"]);
  const INLINE_DISPLAYS = new Set(["inline", "inline-block", "inline-flex", "inline-grid",
    "inline-table", "contents", "ruby", "ruby-text", "ruby-base", "ruby-text-container",
    "ruby-base-container"]);

  const doc = document;
  const root = doc.documentElement;
  const scrollX = window.scrollX || 0;
  const scrollY = window.scrollY || 0;
  const styleCache = new Map();
  const styleOf = (el) => {
    let s = styleCache.get(el);
    if (s === undefined) { s = getComputedStyle(el); styleCache.set(el, s); }
    return s;
  };
  const boxOf = (el) => {
    const r = el.getBoundingClientRect();
    return { left: Math.round(r.left + scrollX), top: Math.round(r.top + scrollY),
             width: Math.round(r.width), height: Math.round(r.height) };
  };
  const describe = (el) => ({
    name: el.tagName.toLowerCase(),
    id: el.id || "",
    classes: Array.from(el.classList || []),
  });
  const metaContent = (selector) => {
    const el = doc.querySelector(selector);
    return el ? (el.getAttribute("content") || "").trim() : "";
  };
  const nonEmpty = (values) => values.map((v) => (v || "").trim()).filter((v) => v);

  // ---- page metadata ----------------------------------------------------------------
  const titles = nonEmpty([
    doc.title,
    metaContent('meta[property="og:title"]'),
    metaContent('meta[name="twitter:title"]'),
  ]);
  const descriptions = nonEmpty([
    metaContent('meta[name="description" i]'),
    metaContent('meta[property="og:description"]'),
    metaContent('meta[name="twitter:description"]'),
  ]);
  const canonicalEl = doc.querySelector('link[rel~="canonical" i]');
  const og = {};
  for (const el of doc.querySelectorAll('meta[property^="og:"], meta[property^="article:"]')) {
    const key = el.getAttribute("property").trim();
    const value = (el.getAttribute("content") || "").trim();
    if (!value) continue;
    if (key in og) {
      og[key] = [].concat(og[key], value);
    } else {
      og[key] = value;
    }
  }
  const meta = {};
  const META_NAMES = ["author", "keywords", "date", "pubdate", "publishdate", "dc.date",
    "dc.date.issued", "dc.creator", "dc.language", "parsely-pub-date", "parsely-author",
    "sailthru.date", "sailthru.author", "byl", "news_keywords", "robots", "tdm-reservation"];
  for (const name of META_NAMES) {
    const value = metaContent(`meta[name="${name}" i]`);
    if (value) meta[name] = value;
  }
  // Robots meta tags named for an agent (<meta name="GPTBot" content="noai">), kept as
  // document/reservations.py's agent_robots_metas keeps them; which agents count is decided
  // later (ROBOTS_AGENTS).
  const DIRECTIVES = ["noai", "noimageai", "noindex", "none"];  // none: noindex, nofollow
  const AGENT = /^[a-z0-9][a-z0-9._-]{0,63}$/;
  let agentMetas = 0;
  for (const el of doc.querySelectorAll("meta[name][content]")) {
    if (agentMetas >= 8) break;
    const agent = el.getAttribute("name").trim().toLowerCase();
    const content = (el.getAttribute("content") || "").trim();
    if (agent === "robots" || !AGENT.test(agent) || `robots:${agent}` in meta) continue;
    const tokens = content.toLowerCase().split(",").map((part) => part.split(":").pop().trim());
    if (!tokens.some((token) => DIRECTIVES.includes(token))) continue;
    meta[`robots:${agent}`] = content.slice(0, 200);
    agentMetas += 1;
  }
  const httpLanguage = metaContent('meta[http-equiv="content-language" i]');
  if (httpLanguage) meta["content-language"] = httpLanguage;
  const timeElements = Array.from(doc.querySelectorAll("time[datetime]"))
    .slice(0, 5).map((el) => el.getAttribute("datetime"));

  // JSON-LD: keep the objects whose @type names a kind of article (or web page).
  const jsonld = [];
  const jsonldTypes = [];
  const ARTICLE_TYPE = /Article|BlogPosting|NewsArticle|Report|Posting|WebPage/;
  const personNames = (value) => [].concat(value || []).map((a) =>
    typeof a === "string" ? a : (a && a.name) || "").filter((a) => a);
  const visit = (node, depth) => {
    if (!node || typeof node !== "object" || depth > 6) return;
    if (Array.isArray(node)) { node.forEach((n) => visit(n, depth + 1)); return; }
    if (node["@graph"]) visit(node["@graph"], depth + 1);
    const types = [].concat(node["@type"] || []).map(String);
    jsonldTypes.push(...types);
    if (types.some((t) => ARTICLE_TYPE.test(t))) {
      jsonld.push({
        type: types,
        headline: node.headline || node.name || "",
        description: node.description || "",
        datePublished: node.datePublished || "",
        dateModified: node.dateModified || "",
        author: personNames(node.author),
        url: typeof node.url === "string" ? node.url : "",
        inLanguage: typeof node.inLanguage === "string" ? node.inLanguage : "",
        // Paywalled content (schema.org): on the article, or on the parts it locks.
        isAccessibleForFree: node.isAccessibleForFree ?? null,
        partsFree: [].concat(node.hasPart || []).slice(0, 20)
          .map((part) => (part && typeof part === "object" ? part.isAccessibleForFree ?? null : null)),
      });
    }
  };
  for (const script of doc.querySelectorAll('script[type="application/ld+json" i]')) {
    try { visit(JSON.parse(script.textContent), 0); } catch (e) { /* broken JSON-LD */ }
  }

  const page = {
    url: location.href,
    // The document's own URL (after HTTP redirects), which history.pushState cannot change.
    document_url: (performance.getEntriesByType("navigation")[0] || {}).name || location.href,
    // The charset the browser read the page in (a UTF-8 page may declare another).
    charset: doc.characterSet || "",
    titles,
    descriptions,
    canonical_url: canonicalEl ? canonicalEl.href : "",
    lang: (root && root.getAttribute("lang")) || "",
    og,
    meta,
    time_datetimes: timeElements,
    jsonld,
    jsonld_types: jsonldTypes,
    viewport: { width: window.innerWidth, height: window.innerHeight },
    body: null,
    texts: [],
    hidden_text_chars: 0,
    blocks_truncated: false,
  };
  const body = doc.body;
  if (!body) return page;
  // Consent dialogs (document/consent.py) are no text of the page's: out before reading.
  if (consentSelector) {
    try {
      for (const dialog of doc.querySelectorAll(consentSelector)) dialog.remove();
    } catch (e) { /* a selector this browser does not know */ }
  }

  // ---- body ---------------------------------------------------------------------------
  const bodyStyle = styleOf(body);
  const bodyComputed = {};
  for (const p of VISUAL_PROPERTIES) bodyComputed[p] = bodyStyle.getPropertyValue(p);
  const bodyBox = boxOf(body);
  bodyBox.height = Math.max(bodyBox.height, Math.round(root.scrollHeight));
  bodyBox.width = Math.max(bodyBox.width, Math.round(root.scrollWidth));
  page.body = { bound: bodyBox, scroll: { left: scrollX, top: scrollY }, computed: bodyComputed };

  // ---- text blocks --------------------------------------------------------------------
  const visibleCache = new Map();
  const isVisible = (el) => {
    let v = visibleCache.get(el);
    if (v === undefined) {
      v = el.checkVisibility
        ? el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })
        : styleOf(el).visibility !== "hidden" && styleOf(el).display !== "none";
      visibleCache.set(el, v);
    }
    return v;
  };
  const blockCache = new Map();
  const blockOf = (el) => {
    const chain = [];
    let node = el;
    let found = null;
    while (node && node !== root) {
      const cached = blockCache.get(node);
      if (cached !== undefined) { found = cached; break; }
      chain.push(node);
      if (node === body || !INLINE_DISPLAYS.has(styleOf(node).display)) { found = node; break; }
      node = node.parentElement;
    }
    for (const n of chain) blockCache.set(n, found || body);
    return found || body;
  };
  const skippedAncestor = (el) => {
    for (let n = el; n && n !== body; n = n.parentElement) {
      if (SKIPPED_TAGS.has(n.tagName.toUpperCase())) return true;
    }
    return false;
  };
  const linkOf = (el, block) => {
    for (let n = el; n && n !== block; n = n.parentElement) {
      if (n.tagName === "A" && n.hasAttribute("href")) return n;
    }
    return null;
  };

  const range = doc.createRange();
  // A block is a run of an element's own text: an element whose text goes on after a
  // block nested in it (a post's text, a list, then its closing paragraphs) gives a block
  // per run, in reading order (they were one block, first in order, so the closing text
  // came before the list). Every run has the element's box, style and paths. A run of no
  // letters or digits (a " | " between links) stays with the run before it.
  const entries = [];  // {el, texts, linkChars, links:Set}, in reading order
  const latest = new Map();  // element -> its latest entry
  let previousBlock = null;
  const WORDY = /[\p{L}\p{N}]/u;
  const walker = doc.createTreeWalker(body, NodeFilter.SHOW_TEXT);
  let hiddenChars = 0;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const value = node.nodeValue;
    if (!value || !value.trim()) continue;
    const parent = node.parentElement;
    if (!parent || skippedAncestor(parent)) continue;
    let visible = isVisible(parent);
    if (visible) {
      range.selectNodeContents(node);
      const r = range.getBoundingClientRect();
      visible = r.width > 0 && r.height > 0 &&
        r.right + scrollX > 0 && r.bottom + scrollY > 0;
    }
    if (!visible) {
      hiddenChars += value.trim().length;
      // Not <body>: a stray hidden text node right in it would mark the whole page
      // hidden for every later reader of the DOM (a posterous.com page: its rules and
      // text density found nothing).
      if (parent !== body) parent.setAttribute("data-sc-hidden", "");
      continue;
    }
    const block = blockOf(parent);
    let entry = latest.get(block);
    if (!entry || (block !== previousBlock && WORDY.test(value))) {
      entry = { el: block, texts: [], linkChars: 0, links: new Set() };
      latest.set(block, entry);
      entries.push(entry);
    }
    previousBlock = block;
    entry.texts.push(value);
    const link = linkOf(parent, block);
    if (link) {
      entry.linkChars += value.trim().length;
      entry.links.add(link);
    }
  }

  const marks = new Map();  // element -> its blocks' numbers
  for (const entry of entries) {
    const el = entry.el;
    if (page.texts.length >= maxBlocks) {
      page.blocks_truncated = true;  // a pathological page: keep the first maxBlocks
      break;
    }
    const bound = boxOf(el);
    // A box of a pixel or less is a visually-hidden pattern (sr-only), not content.
    if (el !== body && (bound.width <= 1 || bound.height <= 1)) {
      hiddenChars += entry.texts.join("").trim().length;
      el.setAttribute("data-sc-hidden", "");
      continue;
    }
    const selector = [];
    const path = [];
    for (let n = el; n && n !== body && n !== root; n = n.parentElement) {
      selector.push(describe(n));
      path.push(n.tagName.toLowerCase());
    }
    selector.reverse();
    path.reverse();
    const style = styleOf(el);
    const computed = {};
    for (const p of VISUAL_PROPERTIES) {
      const value = style.getPropertyValue(p);
      if (value !== bodyComputed[p]) computed[p] = value;
    }
    // A later run's markup is its element's, whose first run carries it.
    let html = el === body || marks.has(el) ? "" : el.innerHTML;
    const htmlTruncated = html.length > maxHtmlChars;
    if (htmlTruncated) html = html.slice(0, maxHtmlChars);
    // The element lists every block it holds ("3 7"), for text density's alignment.
    const numbers = marks.get(el) || [];
    numbers.push(String(page.texts.length));
    marks.set(el, numbers);
    el.setAttribute("data-sc-block", numbers.join(" "));
    const block = {
      bound,
      computed,
      element: describe(el),
      path,
      selector,
      text: entry.texts,
      html,
      html_truncated: htmlTruncated,
      link_chars: entry.linkChars,
      link_count: entry.links.size,
    };
    if (numbers.length > 1) block.run_of = Number(numbers[0]);  // the element's first run
    page.texts.push(block);
  }
  page.hidden_text_chars = hiddenChars;
  return page;
}
