"""spidercrawl's own Scrapy signals (sent with ``crawler.signals.send_catch_log``).

``site_model_changed(site, model)``
    The learning pipeline started using a new model for ``site``, or (``model=None``)
    stopped using one because the site's template changed. The fast-path middleware
    listens, so pages are fetched plainly only while a model with usable rules is in use.
"""

site_model_changed = object()
