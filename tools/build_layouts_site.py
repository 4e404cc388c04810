"""Write a demo site of four layouts, mixed in crawl order, with gold text for each page.

    python tools/build_layouts_site.py OUT [PAGES]   # writes OUT/harbourtimes.example/

Real news sites serve several templates at once: the current article page, an archive
kept in the template of an earlier redesign, live blogs, photo galleries. This builds such
a site from the bundled demo's generator (same seeded text, same site chrome), 60 pages
by default, whose IDs (the crawl's order) cycle through the layouts, so that the first pages a crawl
learns from hold a few of each:

- ``story``: the bundled demo's template (30 pages);
- ``archive``: the template before the redesign, a table layout whose cells hold the
  article (10 pages; browsers add the ``tbody`` that the raw HTML lacks);
- ``live``: a live blog, a summary and timestamped updates (10 pages);
- ``gallery``: a photo gallery, an introduction and long captions (10 pages).

``layouts.json`` maps each page ID to its layout, for the benchmark's per-layout figures
(``benchmarks/multi_layout_crawl.py``).
"""

from __future__ import annotations

import html
import json
import random
import shutil
import sys
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_demo_site import (
    AUTHORS,
    HOST,
    STYLE,
    article_path,
    build_article,
    gold_text,
    paragraph,
    render_body,
    render_page,
    sentence,
)

# Crawl order: page n has layout CYCLE[n % len(CYCLE)].
CYCLE = ("story", "archive", "story", "live", "story", "gallery")
PAGES = 60

EXTRA_STYLE = """
table.frame { width: 960px; margin: 0 auto; border-collapse: collapse; }
td.nav-cell { width: 180px; vertical-align: top; font-family: Verdana, sans-serif;
              font-size: 11px; background: #e8eef2; }
td.content-cell { vertical-align: top; padding: 12px; font-family: Times, serif; }
.article-text p { font-size: 15px; line-height: 1.4; }
.live-blog h1 { font-size: 34px; }
.live-summary { background: #fff4e0; padding: 12px; font-size: 17px; }
.live-update { border-left: 3px solid #b23a48; margin: 16px 0; padding-left: 12px; }
.live-update time { font-family: Arial, sans-serif; font-weight: bold; color: #b23a48; }
.live-update h3 { font-size: 19px; margin: 4px 0; }
.live-update p { font-size: 16px; line-height: 1.5; }
.gallery h1 { font-size: 34px; }
.gallery-intro { font-size: 18px; color: #444; }
.slide img { display: block; background: #cdd; }
.slide-caption { font-size: 16px; line-height: 1.5; color: #333; margin-bottom: 24px; }
"""


def chrome(article: dict, main: str, related: list[dict]) -> str:
    """The bundled template's page with its ``<main>`` replaced: same head, masthead,
    sidebar and footer (the site's chrome does not change with the layout)."""
    page = render_page(article, related)
    start = page.index('<main id="main">')
    end = page.index("</main>") + len("</main>")
    return page[:start] + main + page[end:]


def archive_page(article: dict, related: list[dict]) -> str:
    """The template before the redesign: a table, navigation in one cell, the article in
    the other, no ``tbody`` in the markup."""
    links = "".join(
        f'<a href="{article_path(r)}">{html.escape(r["headline"])}</a><br>' for r in related
    )
    body = render_body(article["body"])
    page = render_page(article, related)
    head = page[: page.index("<body>") + len("<body>")]
    return f"""{head}
<div id="top"><span class="logo">The Harbour Times</span> &middot; archive</div>
<table class="frame"><tr>
<td class="nav-cell"><b>Sections</b><br><a href="/city/">City</a><br><a href="/sport/">Sport</a>
<br><br><b>See also</b><br>{links}</td>
<td class="content-cell">
<h1 class="title">{html.escape(article["headline"])}</h1>
<div class="dateline">{article["date"]:%d/%m/%Y} &middot; {html.escape(article["author"])}</div>
<div class="article-text">
{body}
</div>
<div class="print-link"><a href="#">Print this article</a></div>
</td></tr></table>
<div id="bottom">&copy; The Harbour Times. All rights reserved.</div>
</body>
</html>
"""


def live_main(article: dict, rng: random.Random) -> tuple[str, list[str]]:
    """A live blog: a summary and timestamped updates, newest first. Returns the
    ``<main>`` and the gold lines."""
    topic = article["topic"]
    headline = f"Live: {article['headline']}"
    gold = [headline, article["description"]]
    updates = []
    for number in range(rng.randint(5, 7)):
        title = sentence(rng, topic).rstrip(".")
        text = paragraph(rng, topic)
        gold += [title, text]
        minute = 50 - number * 7
        updates.append(
            f'<li class="live-update"><time>11:{minute:02d}</time>'
            f"<h3>{html.escape(title)}</h3><p>{html.escape(text)}</p></li>"
        )
    main = f"""<main id="main">
<section class="live-blog">
  <div class="live-badge">LIVE</div>
  <h1 class="headline">{html.escape(headline)}</h1>
  <div class="live-summary"><p>{html.escape(article["description"])}</p></div>
  <ol class="live-updates">{"".join(updates)}</ol>
  <div class="share">Share: <a href="#">Email</a></div>
</section>
</main>"""
    return main, gold


def gallery_main(article: dict, rng: random.Random) -> tuple[str, list[str]]:
    """A photo gallery: an introduction and a long caption under each photo."""
    topic = article["topic"]
    headline = f"In pictures: {article['headline']}"
    intro = paragraph(rng, topic)
    gold = [headline, intro]
    slides = []
    for number in range(rng.randint(5, 7)):
        caption = f"{sentence(rng, topic)} {sentence(rng, topic)} Photo: {rng.choice(AUTHORS)}"
        gold.append(caption)
        slides.append(
            f'<figure class="slide"><img src="/static/gallery-{article["id"]}-{number}.jpg" '
            f'width="640" height="400" alt=""><figcaption class="slide-caption">'
            f"{html.escape(caption)}</figcaption></figure>"
        )
    main = f"""<main id="main">
<div class="gallery">
  <h1 class="headline">{html.escape(headline)}</h1>
  <p class="gallery-intro">{html.escape(intro)}</p>
  {"".join(slides)}
  <div class="share">Share: <a href="#">Email</a></div>
</div>
</main>"""
    return main, gold


def build(out: Path, pages: int = PAGES, cycle: tuple[str, ...] = CYCLE) -> Path:
    """Write the site snapshot of ``pages`` pages under ``out``, page n of layout
    ``cycle[n % len(cycle)]``; returns its folder."""
    rng = random.Random(2026)
    start = date(2024, 1, 8)
    articles = [build_article(rng, n, start + timedelta(days=n)) for n in range(pages)]
    site = out / HOST
    if site.exists():
        shutil.rmtree(site)
    for folder in ("pages", "gold", "files/static"):
        (site / folder).mkdir(parents=True)
    index, layouts = [], {}
    for a in articles:
        layout = cycle[int(a["id"]) % len(cycle)]
        related = [r for r in articles if r["section"] == a["section"] and r is not a][:3]
        if layout == "archive":
            page, gold = archive_page(a, related), gold_text(a)
        elif layout in ("live", "gallery"):
            main, lines = (live_main if layout == "live" else gallery_main)(a, rng)
            page, gold = chrome(a, main, related), "\n".join(lines) + "\n"
        else:
            page, gold = render_page(a, related), gold_text(a)
        (site / "pages" / f"{a['id']}.html").write_text(page, "utf-8")
        (site / "gold" / f"{a['id']}.txt").write_text(gold, "utf-8")
        index.append(f"{a['id']}\thttps://{HOST}{article_path(a)}")
        layouts[a["id"]] = layout
    (site / "index.tsv").write_text("\n".join(index) + "\n", "utf-8")
    (site / "layouts.json").write_text(json.dumps(layouts, indent=1) + "\n", "utf-8")
    (site / "files/static/style.css").write_text(STYLE + EXTRA_STYLE, "utf-8")
    return site


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.splitlines()[2].strip())
    pages = int(sys.argv[2]) if len(sys.argv) == 3 else PAGES
    site = build(Path(sys.argv[1]), pages)
    print(f"wrote {pages} pages of {len(set(CYCLE))} layouts to {site}")


if __name__ == "__main__":
    main()
