"""The page item: what a crawl yields for each rendered page, and what learning consumes.

Field names follow the published ziyan-spider data (page: ``url``, ``titles``,
``descriptions``, ``body``, ``texts``; block: ``bound``, ``computed``, ``element``,
``path``, ``selector``, ``text``, ``html``), so the same learning code runs on pages we
capture and on that data. The extra fields carry what the crawl knows besides the blocks.

A block (one dict in ``texts``) has:

- ``bound``: ``{left, top, width, height}`` in document pixels;
- ``element``: ``{name, id, classes}`` of the block element;
- ``path``: tag names from below ``<body>`` down to the block;
- ``selector``: the ``element`` dicts along that same path;
- ``text``: the raw text-node strings that belong to the block (nested blocks excluded);
- ``html``: the block's innerHTML (cut at ``CAPTURE_MAX_BLOCK_HTML`` characters, then
  ``html_truncated`` is true);
- ``computed``: the visual CSS properties whose computed value differs from body's
  (a missing key means "same as body"; see ``VISUAL_PROPERTIES`` in ``capture.js``);
- ``link_chars`` / ``link_count``: characters of text inside links, and distinct links.
"""

from __future__ import annotations

import scrapy


class PageItem(scrapy.Item):
    """One rendered page of a site, with its text blocks."""

    # What the page and its site reserve (noai, noindex, tdm): document/reservations.py
    reservations = scrapy.Field()
    # ziyan-spider fields
    url = scrapy.Field()  # final URL after redirects
    titles = scrapy.Field()  # <title>, og:title, twitter:title (non-empty ones)
    descriptions = scrapy.Field()  # meta description, og:description, twitter:description
    body = scrapy.Field()  # {bound, scroll, computed}: computed has every visual property
    texts = scrapy.Field()  # the text blocks, in document order of their first text node

    # crawl and page metadata
    site = scrapy.Field()  # the site's name as given to the spider (``-a site=``)
    requested_url = scrapy.Field()
    status = scrapy.Field()
    canonical_url = scrapy.Field()
    lang = scrapy.Field()  # <html lang>
    og = scrapy.Field()  # og:* and article:* meta properties
    meta = scrapy.Field()  # author, keywords, date-like <meta name> values
    time_datetimes = scrapy.Field()  # datetime attributes of the first <time> elements
    jsonld = scrapy.Field()  # JSON-LD objects of article/page types (headline, dates, authors)
    jsonld_types = scrapy.Field()  # every JSON-LD @type seen on the page
    viewport = scrapy.Field()  # {width, height} of the browser window
    hidden_text_chars = scrapy.Field()  # characters of text the browser did not show
    blocks_truncated = scrapy.Field()  # more than CAPTURE_MAX_BLOCKS blocks: the rest dropped
    rendered_html = scrapy.Field()  # DOM after rendering, blocks marked data-sc-block="i"
    # (the raw HTML when capture_mode is "http")
    discovered_by = scrapy.Field()  # sitemap, news-sitemap, feed, link, start
    capture_mode = scrapy.Field()  # "browser" (rendered, blocks) or "http" (fast path, no blocks)
    fast_path_rejected = scrapy.Field()  # why the fast path sent this page to the browser
    headlines = scrapy.Field()  # <h1> texts of a page without blocks (raw HTML)
    decks = scrapy.Field()  # its decks as its raw HTML shows them (``document.deck.Deck``)
    fast_path_article = scrapy.Field()  # in memory only: the fast path's checked article
    fast_path_version = scrapy.Field()  # the model whose rules rejected it
    raw_html = scrapy.Field()  # the HTML as the server sent it (rendered pages; see raw_html.py)
    render_failed = scrapy.Field()  # why the browser failed: the page comes from its raw HTML
    render_skipped = scrapy.Field()  # breadth mode: why the page was not rendered
    crawled_at = scrapy.Field()  # ISO 8601, UTC
    post_of = scrapy.Field()  # one post of a page of several: that page's URL (extract/posts.py)
    validators = scrapy.Field()  # the plain fetch's ETag / Last-Modified (capture/conditional.py)
    page_digest = scrapy.Field()  # memory.page_digest of the HTML as the server sent it


class ArticleItem(scrapy.Item):
    """One extracted article: what the feeds are made of."""

    url = scrapy.Field()
    canonical_url = scrapy.Field()
    site = scrapy.Field()
    title = scrapy.Field()  # the visible headline, checked against og:title / JSON-LD / <title>
    description = scrapy.Field()
    authors = scrapy.Field()  # list of names; [] when the page names none credibly
    published = scrapy.Field()  # ISO 8601 (a date alone when the time is unknown); "" if unknown
    modified = scrapy.Field()
    image = scrapy.Field()  # the main image's absolute URL (og:image)
    text = scrapy.Field()  # paragraphs separated by blank lines
    html = scrapy.Field()  # the content as clean HTML: p, h1-h6, ul/ol/li, blockquote, pre, table
    markdown = scrapy.Field()  # the same content as Markdown (GitHub tables)
    lang = scrapy.Field()  # BCP 47 tag: the declared one unless the text clearly says otherwise
    # learned, rules, learned+container, learned+unseen, learned+density-fallback, unseen, density
    method = scrapy.Field()
    method_note = scrapy.Field()  # why that method, when it is not the learned model
    model_version = scrapy.Field()  # the site model's version, if one was used
    confidence = scrapy.Field()  # 0-1: how sure the extractor is
    word_count = scrapy.Field()
    crawled_at = scrapy.Field()
    update = scrapy.Field()  # "new" or "changed" since the last crawl (incremental crawls)
    post_of = scrapy.Field()  # for one post of a page of several: that page's URL
    # A near-duplicate of an article delivered before: {"url": ..., "site": ...} of it.
    duplicate_of = scrapy.Field()
    access = scrapy.Field()  # "paywalled" or "free" where the page says (document/access.py)
    # What the site reserves of its text, of what applies to us: "tdm" (TDMRep), "noai",
    # "noindex"... (robots meta tags and X-Robots-Tag for every crawler or one of
    # ROBOTS_AGENTS, tdmrep.json): document/reservations.py
    reserved = scrapy.Field()
    # In the pipelines only (the delivery pipeline records and removes it): the page's
    # ETag / Last-Modified, for a conditional fetch next time; the digest of its HTML, so
    # that the same page extracted another way is no update.
    validators = scrapy.Field()
    page_digest = scrapy.Field()
