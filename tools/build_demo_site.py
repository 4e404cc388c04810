"""Write the bundled demo site: *The Harbour Times*, a fictional local newspaper.

    python tools/build_demo_site.py          # rewrites demo/harbourtimes.example/

All text is made up here (licence-clean) from a seeded random generator, so the output is
the same on every run. The site is a site snapshot (see spidercrawl/snapshot.py): 30
article pages sharing one template, with everything real pages have around the article
(navigation, byline and date, sub-headings, pull quotes, lists, captions, related links,
comments drawn by JavaScript, ads, hidden text, footer, meta and OpenGraph tags), the
gold main text of each page (headline, paragraphs, sub-headings, quote, list items), a
stylesheet, a robots.txt that disallows /private/, and one private page.
"""

from __future__ import annotations

import html
import json
import random
import shutil
from datetime import date, timedelta
from pathlib import Path

HOST = "harbourtimes.example"
OUT = Path(__file__).resolve().parent.parent / "demo" / HOST
SECTIONS = ["city", "business", "sport", "culture", "science"]
AUTHORS = ["Maren Holt", "Tobias Lindqvist", "Priya Raman", "Elliot Marsh", "Ada Okafor"]
PLACES = [
    "the harbour",
    "the old town",
    "Kelp Street",
    "the ferry terminal",
    "North Quay",
    "the lighthouse",
    "the market hall",
    "Saltmarsh Park",
]
GROUPS = [
    "the town council",
    "local fishermen",
    "the harbour trust",
    "shop owners",
    "residents",
    "the rowing club",
    "teachers at the grammar school",
    "volunteers",
]
TOPICS = {
    "city": [
        "a new cycle lane",
        "the sea wall repairs",
        "late-night bus routes",
        "a rise in parking fees",
        "the flood barrier",
    ],
    "business": [
        "the cannery's reopening",
        "a bakery cooperative",
        "rising rents",
        "the fish auction",
        "a new ferry contract",
    ],
    "sport": [
        "the regatta",
        "the under-16 football final",
        "a record swim across the bay",
        "the rowing club's new boat",
        "the cliff-top half marathon",
    ],
    "culture": [
        "the lantern festival",
        "a sea-shanty choir",
        "the library's reopening",
        "a mural on the harbour wall",
        "the winter film season",
    ],
    "science": [
        "seagrass planting",
        "a survey of puffin colonies",
        "tide-gauge data",
        "a school weather station",
        "a study of harbour seals",
    ],
}
VERBS = [
    "debated",
    "welcomed",
    "questioned",
    "celebrated",
    "postponed",
    "approved",
    "criticised",
    "funded",
]
ADJECTIVES = [
    "long-awaited",
    "controversial",
    "modest",
    "ambitious",
    "unexpected",
    "popular",
    "costly",
    "overdue",
]
SENTENCES = [
    "{Group} {verb} {topic} at a meeting near {place} on {day}.",
    "The plan, first proposed {years} years ago, would cost about {money} pounds.",
    "\u201cWe have waited a long time for this,\u201d said {person}, who has lived by {place} "
    "for {years} decades.",
    "Critics argue that {topic} does little for {group2}, who say they were not consulted.",
    "Supporters point to similar schemes along the coast that drew {number} extra visitors a year.",
    "A final decision is expected before the end of {month}, when the budget is set.",
    "Officials said the work near {place} would take roughly {number} weeks.",
    "{Person} described the mood as {adjective} but hopeful.",
    "Figures published by {group2} suggest that {number} households could be affected.",
    "The {adjective} proposal has divided opinion on both sides of {place}.",
    "Several speakers asked how {topic} would be paid for in the long run.",
    "Weather permitting, the first phase will begin in {month}.",
]
MONTHS = ["March", "April", "May", "June", "September", "October", "November"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
FIRST = ["Ingrid", "Samuel", "Hana", "Callum", "Rosa", "Felix", "Nadia", "Owen"]
LAST = ["Pike", "Carrick", "Tern", "Ballard", "Fenwick", "Osei", "Rowe", "Kestrel"]


def sentence(rng: random.Random, topic: str) -> str:
    template = rng.choice(SENTENCES)
    values = {
        "group": rng.choice(GROUPS),
        "group2": rng.choice(GROUPS),
        "verb": rng.choice(VERBS),
        "topic": topic,
        "place": rng.choice(PLACES),
        "day": rng.choice(DAYS),
        "years": rng.randint(2, 9),
        "money": f"{rng.randint(2, 90) * 10000:,}",
        "person": f"{rng.choice(FIRST)} {rng.choice(LAST)}",
        "number": rng.randint(3, 400),
        "month": rng.choice(MONTHS),
        "adjective": rng.choice(ADJECTIVES),
    }
    values["Group"] = values["group"][0].upper() + values["group"][1:]
    values["Person"] = values["person"]
    return template.format(**values)


def paragraph(rng: random.Random, topic: str) -> str:
    return " ".join(sentence(rng, topic) for _ in range(rng.randint(2, 4)))


def slugify(text: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def build_article(rng: random.Random, number: int, day: date) -> dict:
    section = SECTIONS[number % len(SECTIONS)]
    topic = rng.choice(TOPICS[section])
    headline = (
        f"{rng.choice(GROUPS).capitalize()} {rng.choice(VERBS)} "
        f"{rng.choice(ADJECTIVES)} plans for {topic}"
    )
    body: list[tuple[str, str]] = [("p", paragraph(rng, topic)) for _ in range(rng.randint(3, 4))]
    body.append(("h2", f"What {topic} means for {rng.choice(PLACES)}"))
    body += [("p", paragraph(rng, topic)) for _ in range(rng.randint(2, 3))]
    body.append(("blockquote", sentence(rng, topic)))
    if number % 2 == 0:
        body.append(("ul", [sentence(rng, topic) for _ in range(3)]))
    body.append(("h2", "What happens next"))
    body += [("p", paragraph(rng, topic)) for _ in range(rng.randint(1, 3))]
    description = sentence(rng, topic)
    # As in real news, the lede restates the standfirst before going on.
    body[0] = ("p", f"{description} {body[0][1]}")
    return {
        "id": f"{number:03d}",
        "section": section,
        "topic": topic,
        "headline": headline,
        "description": description,
        "author": AUTHORS[number % len(AUTHORS)],
        "date": day,
        "body": body,
        "slug": slugify(headline)[:80],
        "caption": f"{rng.choice(PLACES).capitalize()} at dawn. Photo: {rng.choice(AUTHORS)}",
        "comments": [
            {"name": rng.choice(FIRST), "text": sentence(rng, topic)}
            for _ in range(rng.randint(1, 4))
        ],
    }


def article_path(article: dict) -> str:
    d = article["date"]
    return f"/{article['section']}/{d:%Y/%m/%d}/{article['slug']}/"


def render_body(body: list[tuple[str, object]]) -> str:
    parts = []
    for i, (tag, content) in enumerate(body):
        if tag == "ul":
            items = "".join(f"<li>{html.escape(str(li))}</li>" for li in content)  # type: ignore[union-attr]
            parts.append(f'<ul class="fact-list">{items}</ul>')
        elif tag == "blockquote":
            parts.append(
                f'<blockquote class="pull-quote"><p>{html.escape(str(content))}</p></blockquote>'
            )
        elif tag == "p" and i == 1:
            # an inline link and emphasis inside a paragraph: they must fold into it
            text = html.escape(str(content))
            words = text.split(" ")
            words[2] = f'<a href="/city/">{words[2]}</a>'
            words[5] = f"<em>{words[5]}</em>"
            parts.append(f"<p>{' '.join(words)}</p>")
        else:
            parts.append(f"<{tag}>{html.escape(str(content))}</{tag}>")
    return "\n".join(parts)


# Real sites' metadata is often broken; some demo pages are too (by page number % 10):
# 3: <title> is the site's name, no og:title or JSON-LD headline (the title is the h1);
# 5: the author field holds the navigation, no JSON-LD author (no author is right);
# 7: a garbage article:published_time, no JSON-LD date (the <time> element is right).
BROKEN_TITLE, BROKEN_AUTHOR, BROKEN_DATE = 3, 5, 7


def broken(article: dict) -> int:
    return int(article["id"]) % 10


def render_page(article: dict, related: list[dict]) -> str:
    a = article
    published = f"{a['date']:%Y-%m-%d}T08:30:00+00:00"
    jsonld = {
        "@context": "https://schema.org",
        "@type": "NewsArticle",
        "headline": a["headline"],
        "description": a["description"],
        "datePublished": published,
        "author": [{"@type": "Person", "name": a["author"]}],
        "publisher": {"@type": "Organization", "name": "The Harbour Times"},
    }
    title = f"{html.escape(a['headline'])} | The Harbour Times"
    og_title = f'<meta property="og:title" content="{html.escape(a["headline"])}">'
    author = html.escape(a["author"])
    published_meta = published
    if broken(a) == BROKEN_TITLE:
        title, og_title = "The Harbour Times", ""
        del jsonld["headline"]
    elif broken(a) == BROKEN_AUTHOR:
        author = "Home | City | Business | Sport | Culture | Science | Contact us | Subscribe"
        del jsonld["author"]
    elif broken(a) == BROKEN_DATE:
        published_meta = "Updated recently"
        del jsonld["datePublished"]
    url = f"https://{HOST}{article_path(a)}"
    nav = "".join(f'<li><a href="/{s}/">{s.capitalize()}</a></li>' for s in SECTIONS)
    rel = "".join(
        f'<li><a href="{article_path(r)}">{html.escape(r["headline"])}</a></li>' for r in related
    )
    comments = json.dumps(a["comments"])
    return f"""<!DOCTYPE html>
<html lang="en-GB">
<head>
<meta charset="utf-8">
<title>{title}</title>
<meta name="description" content="{html.escape(a["description"])}">
<meta name="author" content="{author}">
<meta property="og:type" content="article">
{og_title}
<meta property="og:description" content="{html.escape(a["description"])}">
<meta property="og:url" content="{url}">
<meta property="og:site_name" content="The Harbour Times">
<meta property="article:published_time" content="{published_meta}">
<meta property="article:section" content="{a["section"].capitalize()}">
<link rel="canonical" href="{url}">
<link rel="stylesheet" href="/static/style.css">
<script type="application/ld+json">{json.dumps(jsonld)}</script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="masthead">
  <div class="brand"><a href="/">The Harbour Times</a></div>
  <div class="tagline">News from the bay since 1887</div>
  <nav class="main-nav"><ul>{nav}</ul></nav>
</header>
<div class="ad ad-leaderboard">Advertisement: Fresh crab at North Quay Fish Bar, open daily</div>
<div class="layout">
<main id="main">
<article class="story">
  <div class="story-section">{a["section"].capitalize()}</div>
  <h1 class="headline">{html.escape(a["headline"])}</h1>
  <p class="standfirst">{html.escape(a["description"])}</p>
  <div class="byline">By <a rel="author"
    href="/authors/{slugify(a["author"])}/">{html.escape(a["author"])}</a>
    <time datetime="{published}">{a["date"]:%d %B %Y}</time></div>
  <figure class="lead-image"><img src="/static/photo-{a["id"]}.jpg" width="640" height="360" alt="">
    <figcaption>{html.escape(a["caption"])}</figcaption></figure>
  <div class="story-body">
{render_body(a["body"])}
  </div>
  <div class="share">Share: <a href="#">Email</a> <a href="#">Print</a></div>
  <p class="legal-note" style="display:none">This article may not be reproduced
    without permission.</p>
</article>
<section class="comments"><h3>Comments</h3><ol id="comment-list"></ol></section>
<script>
  for (const c of {comments}) {{
    const li = document.createElement("li");
    li.className = "comment";
    li.innerHTML = "<span class=\\"comment-author\\">" + c.name + "</span> " +
      "<span class=\\"comment-text\\">" + c.text + "</span>";
    document.getElementById("comment-list").appendChild(li);
  }}
</script>
</main>
<aside class="sidebar">
  <h3>Related stories</h3><ul class="related">{rel}</ul>
  <div class="ad ad-box">Advertisement: Harbour Lights B&amp;B, rooms with a sea view</div>
  <h3>Newsletter</h3><p class="newsletter">The week's news from the bay, every Friday.</p>
</aside>
</div>
<footer class="site-footer">
  <p>&copy; The Harbour Times, a fictional newspaper made for spidercrawl's demo.</p>
  <ul class="footer-links"><li><a href="/about/">About us</a></li>
  <li><a href="/contact/">Contact</a></li><li><a href="/privacy/">Privacy</a></li></ul>
</footer>
</body>
</html>
"""


STYLE = """body { margin: 0; font-family: Georgia, serif; color: #222; background: #fdfcf8; }
.skip-link { position: absolute; left: -9999px; top: 0; }
.masthead { background: #0b3954; color: #fff; padding: 12px 24px; }
.brand a { color: #fff; font-size: 32px; font-weight: bold; text-decoration: none; }
.tagline { font-style: italic; font-size: 13px; }
.main-nav ul { list-style: none; margin: 8px 0 0; padding: 0; }
.main-nav li { display: inline-block; margin-right: 16px; }
.main-nav a { color: #cfe8ff; font-family: Arial, sans-serif; font-size: 14px; }
.ad { background: #eee; color: #666; font-family: Arial, sans-serif; font-size: 12px;
      text-align: center; padding: 12px; margin: 12px auto; border: 1px dashed #bbb; }
.ad-leaderboard { width: 728px; }
.layout { display: flex; max-width: 1100px; margin: 0 auto; gap: 32px; }
main { flex: 3; }
.sidebar { flex: 1; font-family: Arial, sans-serif; font-size: 13px; }
.story-section { text-transform: uppercase; color: #b23a48; font-family: Arial, sans-serif;
                 font-size: 12px; letter-spacing: 1px; }
.headline { font-size: 38px; line-height: 1.15; margin: 8px 0; }
.standfirst { font-size: 20px; color: #444; }
.byline { font-family: Arial, sans-serif; font-size: 13px; color: #555; }
.lead-image img { display: block; background: #cdd; }
figcaption { font-size: 12px; color: #666; font-family: Arial, sans-serif; }
.story-body p { font-size: 18px; line-height: 1.6; }
.story-body h2 { font-size: 24px; margin-top: 28px; }
.pull-quote { border-left: 4px solid #b23a48; margin: 24px 0; padding-left: 16px;
              font-size: 22px; font-style: italic; color: #0b3954; }
.fact-list li { font-size: 17px; margin-bottom: 6px; }
.share { font-family: Arial, sans-serif; font-size: 12px; }
.comments { border-top: 1px solid #ccc; margin-top: 32px; font-family: Arial, sans-serif;
            font-size: 14px; }
.comment-author { font-weight: bold; }
.related li { margin-bottom: 8px; }
.site-footer { background: #222; color: #ccc; font-family: Arial, sans-serif; font-size: 12px;
               padding: 16px 24px; margin-top: 40px; }
.site-footer a { color: #ccc; }
"""

PRIVATE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Staff notes (private)</title><meta property="og:type" content="article"></head>
<body><h1>Staff notes</h1><p>Robots.txt forbids this page: a polite crawler never fetches it.</p>
</body></html>
"""


def gold_text(article: dict) -> str:
    lines = [article["headline"]]
    for tag, content in article["body"]:
        if tag == "ul":
            lines.extend(str(li) for li in content)  # type: ignore[union-attr]
        else:
            lines.append(str(content))
    return "\n".join(lines) + "\n"


def main() -> None:
    rng = random.Random(1887)
    start = date(2026, 3, 2)
    articles = [build_article(rng, n, start + timedelta(days=n * 2)) for n in range(30)]
    if OUT.exists():
        shutil.rmtree(OUT)
    for folder in ("pages", "gold", "files/static", "files/private"):
        (OUT / folder).mkdir(parents=True)
    index = []
    truth = {}
    for a in articles:
        truth[a["id"]] = {
            "title": a["headline"],
            "authors": [] if broken(a) == BROKEN_AUTHOR else [a["author"]],
            "published": f"{a['date']:%Y-%m-%d}T08:30:00+00:00",
        }
        related = [r for r in articles if r["section"] == a["section"] and r is not a][:3]
        page = render_page(a, related)
        if a["id"] == "007":  # one page links the private area, which robots.txt forbids
            page = page.replace(
                '<li><a href="/privacy/">',
                '<li><a href="/private/staff-notes-2026-03-16.html">Staff</a>'
                '</li><li><a href="/privacy/">',
            )
        (OUT / "pages" / f"{a['id']}.html").write_text(page, "utf-8")
        (OUT / "gold" / f"{a['id']}.txt").write_text(gold_text(a), "utf-8")
        index.append(f"{a['id']}\thttps://{HOST}{article_path(a)}")
    (OUT / "index.tsv").write_text("\n".join(index) + "\n", "utf-8")
    # What a perfect extractor reports for each page (the metadata benchmark reads it).
    (OUT / "metadata.json").write_text(json.dumps(truth, indent=1) + "\n", "utf-8")
    (OUT / "files/static/style.css").write_text(STYLE, "utf-8")
    (OUT / "files/private/staff-notes-2026-03-16.html").write_text(PRIVATE, "utf-8")
    (OUT / "files/robots.txt").write_text(
        "User-agent: *\nDisallow: /private/\nSitemap: /sitemap.xml\n", "utf-8"
    )
    print(f"wrote {len(articles)} articles to {OUT}")


if __name__ == "__main__":
    main()
