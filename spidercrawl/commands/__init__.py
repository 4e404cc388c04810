"""spidercrawl's versions of Scrapy commands (``COMMANDS_MODULE``)."""
