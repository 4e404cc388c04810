"""Scrapy settings for spidercrawl.

Every spidercrawl setting is listed here with its default and why; override any of them
with ``-s NAME=VALUE`` on the command line.
"""

import os

BOT_NAME = "spidercrawl"
SPIDER_MODULES = ["spidercrawl.spiders"]
NEWSPIDER_MODULE = "spidercrawl.spiders"
# Our ``crawl`` checks the spider's arguments first: one error line and exit status 2.
COMMANDS_MODULE = "spidercrawl.commands"

USER_AGENT = "spidercrawl/0.1 (+https://example.invalid/spidercrawl)"

# scrapy-playwright runs on asyncio; with another reactor every render request fails and
# the crawl still "finishes" with no items.
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"

# Politeness: robots.txt is obeyed and AutoThrottle adapts the rate to the server.
ROBOTSTXT_OBEY = True
# The parser keeps the file, so that the spider reads the sitemaps it names without
# downloading it again (spidercrawl/capture/robots.py). Another parser works too: the
# spider then fetches robots.txt itself for discovery.
ROBOTSTXT_PARSER = "spidercrawl.capture.robots.RobotsWithSitemaps"
# Also obey robots.txt's groups for these agents (e.g. ["CCBot", "GPTBot"]): what a site
# withholds from AI crawlers is not fetched (capture/robots.py); and a robots meta tag or
# X-Robots-Tag directive named for one of them counts as one for every crawler does
# (document/reservations.py): one for another agent (googlebot: noindex) does not.
ROBOTS_AGENTS: list[str] = []
# The article's reservations (noai, noimageai, noindex, tdm: document/reservations.py) are
# recorded in its item; an article with one of those named here is not delivered (counted
# in the summary line). False (or []): every article is delivered with its reservations,
# for the user to filter on; True: the AI and TDM opt-outs (noai, noimageai, tdm), not
# noindex (a search engine's matter); or names, "noai,tdm".
RESPECT_RESERVATIONS = False
# Paywalled articles (document/access.py) carry access: "paywalled"; True leaves them out.
SKIP_PAYWALLED = False
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 0.5
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
# Scrapy's AutoThrottle, except that a 304 Not Modified (the answer to a conditional fetch
# of a known page) may lower the delay as a 200 does: a recrawl of a site that changed
# little is mostly 304s. (And a render that follows a plain fetch of its page does not set
# the pace: spidercrawl/capture/throttle.py.)
EXTENSIONS = {
    "scrapy.extensions.throttle.AutoThrottle": None,
    "spidercrawl.capture.throttle.NotModifiedAutoThrottle": 0,
}
CONCURRENT_REQUESTS = 8
CONCURRENT_REQUESTS_PER_DOMAIN = 4
DOWNLOAD_DELAY = 0
DOWNLOAD_TIMEOUT = 60
# Pages above this are not rendered: nothing an article needs is that big.
DOWNLOAD_MAXSIZE = 32 * 1024 * 1024
RETRY_TIMES = 1
# 429 and 503 are retried after the site's Retry-After instead (capture/retry_after.py):
# WALL_RETRIES times, waiting at most WALL_RETRY_AFTER_MAX seconds (WALL_RETRY_DEFAULT
# where the header is missing); then the page counts as blocked (document/walls.py).
RETRY_HTTP_CODES = [500, 502, 504, 522, 524, 408]
WALL_RETRIES = 2
WALL_RETRY_AFTER_MAX = 30.0
WALL_RETRY_DEFAULT = 5.0
# Scrapy checks every response's callback for a generator that returns a value by reading
# and parsing the callback's source. Its cache holds weak references to the callback, and
# a bound method is a new object on each request, so the check runs again for every page:
# about a third of the fast path's own time per page (benchmarks/fast_path_speed.py
# --profile). Our callbacks never return a value (tests/test_settings.py checks it).
WARN_ON_GENERATOR_RETURN_VALUE = False

ADDONS = {
    "spidercrawl.capture.browser.RenderAddon": 0,
    "spidercrawl.distributed.RedisAddon": 0,  # only with REDIS_URL
}
DOWNLOADER_MIDDLEWARES = {
    # Before the capture middleware: it may turn a render request into a plain one.
    "spidercrawl.extract.fast_path.FastPathMiddleware": 940,
    # After the fast path: in breadth mode (RENDER), sites not learned are fetched plainly.
    "spidercrawl.extract.breadth.BreadthMiddleware": 942,
    # After the fast path: pages still bound for the browser get their raw HTML first.
    "spidercrawl.capture.raw_html.RawHtmlMiddleware": 945,
    # Plain fetches of pages delivered before ask If-None-Match / If-Modified-Since.
    "spidercrawl.capture.conditional.ConditionalFetchMiddleware": 946,
    "spidercrawl.capture.middleware.BlockCaptureMiddleware": 950,
    # Before the raw HTML and the fast path read a response: one that leads off the site
    # goes no further.
    "spidercrawl.capture.redirects.OffsiteRedirectMiddleware": 948,
    # In the place of Scrapy's meta refresh (580): a page that reloads itself, or whose
    # refresh leaves the site, is read as it is.
    "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware": None,
    "spidercrawl.capture.redirects.SiteMetaRefreshMiddleware": 580,
    # Before Scrapy's retries (550): a 429 or 503 waits out the site's Retry-After.
    "spidercrawl.capture.retry_after.RetryAfterMiddleware": 560,
    # Before anything parses a response: start tags of thousands of attributes cut.
    "spidercrawl.capture.attribute_floods.AttributeFloodMiddleware": 960,
    # Nearest the download: every response as the server sent it (with WARC_DIR set).
    "spidercrawl.capture.warc.WarcArchiveMiddleware": 990,
}
WARC_DIR = ""  # a folder: one gzipped WARC per site per run of what was fetched (off: "")

# A page of several posts (a blog's front page) becomes one page item per post.
SPIDER_MIDDLEWARES = {
    "spidercrawl.extract.posts.MultiPostMiddleware": 800,
    # With REDIS_URL: marks the requests whose pages are done (spidercrawl/distributed/).
    "spidercrawl.distributed.scheduler.InflightMiddleware": 10,
}
POSTS_SPLIT_ENABLED = True

# --- Rendering (see spidercrawl/capture/browser.py) ---------------------------------
RENDER_BROWSER_PATH = ""  # empty: $SPIDERCRAWL_CHROMIUM, else /usr/bin/chromium
RENDER_BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
RENDER_CONCURRENCY = 2  # browser pages at once; 2 cores render about 2 pages at a time
RENDER_PAGES_PER_CONTEXT = 200  # then the browser context is made anew (0: never)
RENDER_TIMEOUT = 30  # seconds per navigation (until the document is parsed: DOMContentLoaded)
RENDER_LOAD_WAIT = 10  # seconds then waited for the page's load event; captured either way
RENDER_GRACE = 5  # seconds a whole render may take beyond RENDER_TIMEOUT; then raw HTML
RENDER_CLOSE_TIMEOUT = 10  # seconds closing a page, context, browser or driver may take
RENDER_SLOW_LOG = 20  # seconds after which a render in flight is logged with its stage
RENDER_BLOCK_RESOURCES = True
RENDER_BLOCKED_RESOURCE_TYPES = ["image", "media", "font"]
RENDER_ALLOWED_HOSTS: list[str] = []  # empty: any host (the spider narrows it for local copies)
RENDER_VIEWPORT = [1600, 4000]
RENDER_SCHEMES = ["http", "https"]  # one browser serves both (capture/browser.py)

# --- Capture -------------------------------------------------------------------------
CAPTURE_MAX_BLOCK_HTML = 65536  # characters of innerHTML kept per block
CAPTURE_MAX_BLOCKS = 5000  # blocks kept per page (real article pages have 30-500)
CAPTURE_KEEP_HTML = True  # keep the rendered DOM in the page item (text density, rules)
CAPTURE_RAW_HTML = True  # keep the raw HTML too (a plain fetch before the render; peers read it)

# --- The news spider -------------------------------------------------------------------
NEWS_MAX_PAGES = 0  # pages to render; 0 means no limit (``-a max_pages=N``)
NEWS_MAX_DEPTH = 3  # link-following depth from the home page (``-a max_depth=N``)
NEWS_RENDER = "articles"  # "articles": render article pages only; "all": every page
# "always": every article page is rendered; "learning" (breadth mode, for corpus crawls of
# many small sites): a site without a model is read from its raw HTML by consensus, but
# for the pages its model learns from (extract/breadth.py).
RENDER = "always"

# --- Learning and articles (spidercrawl/pipelines/learning.py) ------------------------------
ITEM_PIPELINES = {
    # A page read before its site's tdmrep.json was known waits for it (its opt-out kept).
    "spidercrawl.pipelines.tdm_policy.TdmPolicyWait": 250,
    "spidercrawl.pipelines.learning.SiteLearningPipeline": 300,  # page items -> articles
    # Drops what is not new; writes ARTICLES_FILE and the crawl's memory, article by article.
    "spidercrawl.pipelines.delivery.DeliveryPipeline": 400,
    "spidercrawl.pipelines.jsonfeed.JsonFeedPipeline": 500,  # one JSON Feed per site
    # Last: the content forms ARTICLE_FORMATS leaves out, out of the items exported.
    "spidercrawl.pipelines.delivery.ArticleFormatsPipeline": 900,
}
LEARN_ENABLED = True  # False: the crawl yields page items (blocks) instead of articles
# Who learns each site (learn/site_learner.py): this machine alone. With REDIS_URL the Redis
# add-on names learn/shared_learner.py's SharedSiteLearner: once for every worker.
SITE_LEARNER = "spidercrawl.learn.site_learner.SiteLearner"
LEARN_MIN_PAGES = 10  # pages of a site held before its model is learned
LEARN_MIN_PAGES_AT_END = 3  # a smaller site is learned from this many; fewer: as unseen
# While too many held pages are of templates with too few pages to learn on their own
# (learn/layouts.py), more are held, up to this many; then they are learned as they are.
LEARN_MAX_WAIT_PAGES = 30
# Held pages keep their responses in Scrapy's scraper, which takes no more responses past
# this many bytes; then the held pages are learned from at once. Scrapy's default, 5 MB,
# is 40-90 of dragnet's rendered 2012 pages (median 54 KB, 90th percentile 120 KB) and
# fewer of larger pages: room for LEARN_MAX_WAIT_PAGES of pages up to about 1 MB.
SCRAPER_SLOT_MAX_ACTIVE_SIZE = 32 * 2**20
ARTICLES_ONLY = True  # home, section, tag pages are dropped, not delivered (extract/page_kind.py)
UNSEEN_ENABLED = True  # sites without a model: cross-site model + text density (False: density)
UNSEEN_CONSENSUS = True  # ... and trafilatura + readability on the raw HTML: their medoid
# Pages no browser rendered (the fast path, a failed render): text density, readability and
# trafilatura on the raw HTML, one of them chosen by the decision (extract/decision.py) from
# the page's markup and their agreement. False: density alone.
RAW_CONSENSUS = True
# The fast path's rules' article checked against text density's reading of the same raw
# HTML; where the two disagree, the raw-HTML consensus decides (needs RAW_CONSENSUS).
FAST_PATH_CHECK = True
# Seconds a page's extraction may take before the peers (trafilatura, readability-lxml)
# are left out and our own article stands, with a note (extract/chain.py). A page takes
# tens of milliseconds; this bounds the pathological ones.
EXTRACT_TIME_BUDGET = 10.0
CROSS_SITE_MODEL_DIR = ""  # "": the cross-site model shipped in spidercrawl's models/_cross_site
ARTICLE_HEADLINE_IN_TEXT = True  # an article's text (and HTML) starts with its headline
# Content forms in each article line: any of "text", "html", "markdown" (extract/formats.py).
ARTICLE_FORMATS = ["text", "html", "markdown"]
MODELS_DIR = "models"  # one folder per site: models/<site>/model.npz + model.json
LEARN_SIMILARITY = "lcs"  # auto-labeling relevance: "lcs" (token LCS) or "tfidf" (char n-grams)
LEARN_DBSCAN_EPS = None  # None: the knee of the k-distance curve (see learn/cluster.py)
LEARN_DBSCAN_MIN_PAGE_SHARE = 0.3  # a cluster needs blocks on this share of the pages
LEARN_SEED = 0  # seeds the SVM: the same pages give the same model
# A site model's training labels: "relevance" (each page's blocks against its description,
# by cluster over the site), "consensus" (the blocks the never-seen consensus chose on each
# training page), "consensus-clusters" (its choice, by cluster). learn/consensus_labels.py
LEARN_LABELS = "relevance"
LEARN_LAYOUTS = True  # pages of several templates: one model per layout (learn/layouts.py)
# True where the pages a site is learned from are all it will have (an archive learned per
# host sets it): every template among them of two pages or more is a layout of its own. A
# crawl leaves a template of fewer than three pages to come again (learn/layouts.py).
LEARN_EVERY_TEMPLATE = False
MODEL_VERSIONS_KEPT = 5  # older models of a site kept under models/<site>/versions/

# --- Fast path and template drift (extract/fast_path.py, learn/site_learner.py) ---------
FAST_PATH_ENABLED = True  # learned sites with usable rules: plain HTTP + rules, no browser
# Beyond these a page goes to the browser (a page over the size by its inline scripts'
# content is read without it): they bound the fast path's time per page.
FAST_PATH_MAX_BYTES = 4 * 2**20
FAST_PATH_MAX_ELEMENTS = 25_000
DRIFT_WINDOW = 10  # the last pages of a site judged for template drift
DRIFT_MAX_FAILURE_SHARE = 0.5  # this share of them failing the rules/model: learn again

# --- Incremental crawls and feeds (pipelines/delivery.py, pipelines/jsonfeed.py) ---------
INCREMENTAL_ENABLED = True  # False: deliver every article, even ones delivered before
CONDITIONAL_FETCH = True  # known pages: If-None-Match / If-Modified-Since; a 304 is skipped
STATE_DIR = "state"  # per-site memory of delivered articles: state/<site>.json
# Articles between snapshots of that memory (and at the end); between snapshots each
# delivered article is one line of state/<site>.journal, so a killed crawl loses nothing.
INCREMENTAL_SAVE_EVERY = 500
# Near-duplicates across sites and crawls (spidercrawl/near_duplicates.py): "mark" gives
# such an article `duplicate_of` (the feed leaves it out), "drop" does not deliver it,
# "keep" does not look. Their index lives in STATE_DIR beside the sites' memories.
DUPLICATES = "mark"
NEAR_DUPLICATE_THRESHOLD = 0.8  # estimated Jaccard similarity of word 5-shingles
JSONFEED_ENABLED = True
JSONFEED_PATH = "output/%(site)s/feed.json"  # one JSON Feed 1.1 document per site
JSONFEED_MAX_ITEMS = 500  # newest items kept in each feed document

# Where articles go when the command names no file: one JSON Lines file per site, appended,
# articles only, a whole line per article (spidercrawl/pipelines/articles_file.py). With
# -o/-O FILE, items go to FILE instead; "" writes no default file.
ARTICLES_FILE = "output/%(site)s/articles.jsonl"
FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"
# A dropped item in one line, its reason and URL (Scrapy's adds the whole page item).
LOG_FORMATTER = "spidercrawl.pipelines.log_formatter.OneLineLogFormatter"

# --- Many machines (spidercrawl/distributed/): scrapy-redis on a Redis server ------------
# redis://HOST:PORT/DB turns it on: shared request queue and duplicate filter (kept between
# runs), sites from a Redis queue (python -m spidercrawl.enqueue), exactly-once delivery
# into a Redis stream (python -m spidercrawl.collect writes it to files).
REDIS_URL = os.environ.get("SPIDERCRAWL_REDIS_URL", "")
REDIS_PREFIX = "spidercrawl"  # every key starts with it
REDIS_IDLE_CLOSE = 30  # seconds a worker waits with nothing queued before it stops
REDIS_WAIT_FOREVER = False  # True: workers wait for more sites until stopped
REDIS_WORKER_TIMEOUT = 60  # seconds without heartbeat before a worker's requests go back
REDIS_LEARN_LOCK = 600  # seconds one worker may hold a site's learning lock (then it expires)
