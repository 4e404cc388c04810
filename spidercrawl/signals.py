"""spidercrawl's own Scrapy signals (sent with ``crawler.signals.send_catch_log``).

``site_model_changed(site, model)``
    The learning pipeline started using a new model for ``site``, or (``model=None``)
    stopped using one because the site's template changed. The fast-path middleware
    listens, so pages are fetched plainly only while a model with usable rules is in use.

``site_needs_browser(site, reason)``
    The learning pipeline found that the site's articles are drawn by JavaScript: its
    rules find the article in the browser's DOM but not in the raw HTML. The fast-path
    middleware stops fetching the site's pages plainly first (for the rest of the crawl).

``page_claimed(request, claim)``
    With Redis, the scheduler claimed a page (a ``PageClaim``) and queued its request in
    one step; the spider counts the pages it sent to the browser from this.

``redis_lost(error)``
    Redis stopped answering and the worker stops: the learning pipeline lets go of the
    pages it holds (they wait in Redis, in flight, for the next worker).
"""

site_model_changed = object()
site_needs_browser = object()
page_claimed = object()
redis_lost = object()
