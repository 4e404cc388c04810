"""Item pipelines: grouping page items by site, learning, writing article feeds.

The crawl issue defines the page item (:mod:`spidercrawl.items`); the pipelines that
consume it arrive with the learning and feed issues.
"""
