"""The export page in a real headless Chromium (Debian's ``chromium`` and
``chromium-driver``, driven through Selenium): it loads without console errors, folding and
filters work, injected markup stays text, and a 40-window Tree session renders quickly."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.tree_sessions import write_tree_session

from ctxmodes.export import render_html
from ctxmodes.session.manager import SessionManager

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
PAYLOAD = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'

pytestmark = [
    pytest.mark.chromium,
    pytest.mark.skipif(
        not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
        reason="Debian's chromium and chromium-driver are not installed (make test installs them)",
    ),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="ctxmodes-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def page_for(session: Path, out: Path) -> str:
    with SessionManager.open(session, read_only=True) as manager:
        out.write_text(render_html(manager, session.name), encoding="utf-8")
    return out.as_uri()


@pytest.fixture(scope="module")
def small_page(tmp_path_factory) -> str:
    directory = tmp_path_factory.mktemp("small")
    session = write_tree_session(directory, 2, prompt=f"start {PAYLOAD}", reply=PAYLOAD)
    return page_for(session, directory / "page.html")


def severe_logs(driver) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def test_the_page_loads_without_console_errors(browser, small_page):
    severe_logs(browser)  # drop what an earlier page left
    browser.get(small_page)
    assert browser.execute_script("return document.readyState") == "complete"
    assert severe_logs(browser) == []


def test_injected_markup_is_shown_as_text(browser, small_page):
    from selenium.webdriver.common.by import By

    browser.get(small_page)
    assert browser.execute_script("return window.pwned") is None
    first_user = browser.find_element(By.CSS_SELECTOR, "article.k-user")
    # The prompt sits in archived window 0: unfold it to read it.
    browser.execute_script(
        "for (let d = arguments[0]; d; d = d.parentElement)"
        " if (d.tagName === 'DETAILS') d.open = true;",
        first_user,
    )
    assert "<script>window.pwned = 1</script>" in first_user.text
    assert browser.find_elements(By.CSS_SELECTOR, "main img") == []


def test_archived_windows_fold_and_unfold(browser, small_page):
    from selenium.webdriver.common.by import By

    browser.get(small_page)
    folds = browser.find_elements(By.CSS_SELECTOR, "main details.archived")
    assert len(folds) == 2
    fold = folds[0]
    inner = fold.find_element(By.CSS_SELECTOR, "article")
    assert fold.get_attribute("open") is None
    assert not inner.is_displayed()
    fold.find_element(By.TAG_NAME, "summary").click()
    assert fold.get_attribute("open") == "true"
    assert inner.is_displayed()
    fold.find_element(By.TAG_NAME, "summary").click()
    assert not inner.is_displayed()


def test_a_sidebar_link_unfolds_its_target(browser, small_page):
    from selenium.webdriver.common.by import By

    browser.get(small_page)
    fork = browser.find_element(By.CSS_SELECTOR, "nav li.fork.archived > details")
    fork.find_element(By.TAG_NAME, "summary").click()
    link = fork.find_element(By.CSS_SELECTOR, "li.k-user a")
    target = link.get_attribute("href").split("#", 1)[1]
    link.click()
    article = browser.find_element(By.ID, target)
    assert article.is_displayed()


def test_pi_filters_hide_and_show_entries(browser, small_page):
    from selenium.webdriver.common.by import By

    browser.get(small_page)

    def shown(selector: str) -> int:
        return sum(
            element.is_displayed()
            for element in browser.find_elements(By.CSS_SELECTOR, f"nav {selector}")
        )

    # Unfold everything so only the filter decides what is visible.
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert shown("li.k-meta") == 0  # the default filter hides model and thinking changes
    assert shown("li.k-assistant") > 0
    browser.find_element(By.CSS_SELECTOR, '[data-filter="user-only"]').click()
    assert shown("li.k-assistant") == 0
    assert shown("li.k-user") == 1
    browser.find_element(By.CSS_SELECTOR, '[data-filter="no-tools"]').click()
    assert shown("li.k-tool") == 0
    assert shown("li.k-assistant") > 0
    browser.find_element(By.CSS_SELECTOR, '[data-filter="all"]').click()
    assert shown("li.k-meta") > 0
    assert shown("li.k-tool") > 0


def test_a_forty_window_tree_session_renders_in_under_two_seconds(browser, tmp_path):
    from selenium.webdriver.common.by import By

    session = write_tree_session(tmp_path, 40)
    browser.get(page_for(session, tmp_path / "forty.html"))
    loaded = browser.execute_script(
        "const n = performance.getEntriesByType('navigation')[0];"
        " return n.loadEventEnd - n.startTime;"
    )
    assert len(browser.find_elements(By.CSS_SELECTOR, "main details.archived")) == 40
    assert severe_logs(browser) == []
    assert 0 < loaded < 2000


#: The effective background of an element (the first opaque one up its ancestors, the page's
#: otherwise), and its text colour, as [r, g, b] triples.
COLOURS_JS = """
function rgb(value) { return value.match(/[\\d.]+/g).map(Number); }
function background(element) {
  for (let node = element; node; node = node.parentElement) {
    const colour = rgb(getComputedStyle(node).backgroundColor);
    if (colour.length < 4 || colour[3] > 0.5) return colour.slice(0, 3);
  }
  return rgb(getComputedStyle(document.documentElement).backgroundColor).slice(0, 3);
}
return Array.from(document.querySelectorAll(arguments[0]))
  .filter(e => e.offsetParent !== null && e.textContent.trim())
  .map(e => [background(e), rgb(getComputedStyle(e).color).slice(0, 3)]);
"""


def luminance(colour) -> float:
    def channel(value: float) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(v) for v in colour)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(first, second) -> float:
    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def screenshot_brightness(driver) -> float:
    import io

    from PIL import Image, ImageStat

    image = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("L")
    return ImageStat.Stat(image).mean[0] / 255


@pytest.fixture
def colour_scheme(browser):
    def use(scheme: str) -> None:
        browser.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
        )

    yield use
    use("light")


#: A reply with what a model writes besides prose: code, a table, a quote, a rule, and a word
#: far wider than the page.
RICH_REPLY = (
    "```python\ndef answer() -> int:\n    return 42  # the answer\n```\n\n"
    "| step | state |\n|---|---|\n| `build` | done |\n| test | " + "x" * 400 + " |\n\n"
    "> quoted from the docs\n\n---\n\nthe path " + "segment/" * 60 + " ends here"
)


@pytest.fixture(scope="module")
def code_page(tmp_path_factory) -> str:
    directory = tmp_path_factory.mktemp("code")
    session = write_tree_session(directory, 1, reply=RICH_REPLY)
    return page_for(session, directory / "page.html")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_text_is_readable_in_both_colour_schemes(browser, code_page, colour_scheme, scheme):
    colour_scheme(scheme)
    browser.get(code_page)
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    selector = (
        "main article header, main .md p, main .md code span, main pre, nav a, .facts, "
        "main .md th, main .md td, main .md blockquote"
    )
    pairs = browser.execute_script(COLOURS_JS, selector)
    assert len(pairs) > 10
    worst = min(pairs, key=lambda pair: contrast(*pair))
    assert contrast(*worst) >= 4.5, worst
    page_background = luminance(browser.execute_script(COLOURS_JS, "main")[0][0])
    assert page_background < 0.1 if scheme == "dark" else page_background > 0.8


def test_a_reply_s_table_is_ruled_and_nothing_wide_leaves_its_column(browser, code_page):
    browser.get(code_page)
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    cells = browser.execute_script(
        "return Array.from(document.querySelectorAll('main .md td, main .md th')).map(c => {"
        " const s = getComputedStyle(c); return [s.borderTopStyle, parseFloat(s.borderTopWidth),"
        " parseFloat(s.paddingLeft)]; });"
    )
    assert len(cells) == 6
    assert all(style == "solid" and width >= 1 and padding > 0 for style, width, padding in cells)
    # The page never scrolls sideways; the long word wraps, and the wide table scrolls inside
    # its reply.
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )
    overflowing = browser.execute_script(
        "return Array.from(document.querySelectorAll('main article')).filter("
        " a => a.scrollWidth > a.clientWidth).length"
    )
    assert overflowing == 0
    table = browser.execute_script(
        "const t = document.querySelector('main .md table');"
        " return [t.scrollWidth > t.clientWidth, getComputedStyle(t).overflowX];"
    )
    assert table == [True, "auto"]


def test_the_dark_page_is_dark_and_the_light_page_light(browser, code_page, colour_scheme):
    colour_scheme("light")
    browser.get(code_page)
    light = screenshot_brightness(browser)
    colour_scheme("dark")
    browser.get(code_page)
    dark = screenshot_brightness(browser)
    assert light > 0.8
    assert dark < 0.2


def test_search_finds_text_inside_archived_windows_and_steps_through_matches(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    session = write_tree_session(tmp_path, 3, prompt="Do every step, quietly")
    browser.get(page_for(session, tmp_path / "search.html"))
    folds = browser.find_elements(By.CSS_SELECTOR, "main details.archived")
    assert not any(fold.get_attribute("open") for fold in folds)
    box = browser.find_element(By.ID, "search")
    box.send_keys("QUIETLY")  # case-insensitive; the prompt sits in archived window 0
    hits = browser.find_elements(By.CSS_SELECTOR, "main article.hit")
    # The summary of the window that held the prompt, then the prompt itself inside it.
    assert [hit.get_attribute("class").split()[1] for hit in hits] == ["k-summary", "k-user"]
    assert browser.find_element(By.ID, "hits").text == "1 of 2"
    box.send_keys(Keys.ENTER)
    prompt = browser.find_element(By.CSS_SELECTOR, "main article.current")
    assert prompt == hits[1]
    assert prompt.is_displayed()  # its archived window was unfolded
    assert "Do every step, quietly" in prompt.text
    box.clear()
    box.send_keys("rolling over from window")
    hits = browser.find_elements(By.CSS_SELECTOR, "main article.hit")
    texts = browser.execute_script("return arguments[0].map(a => a.textContent)", hits)
    assert all("rolling over from window" in text.lower() for text in texts)
    kinds = [hit.get_attribute("class").split()[1] for hit in hits]
    assert kinds.count("k-assistant") == 3
    assert browser.find_element(By.ID, "hits").text == f"1 of {len(hits)}"
    box.send_keys(Keys.ENTER)
    current = browser.find_element(By.CSS_SELECTOR, "main article.current")
    assert current == hits[1]
    assert current.is_displayed()
    assert browser.find_element(By.ID, "hits").text == f"2 of {len(hits)}"
    box.send_keys(Keys.SHIFT, Keys.ENTER)
    assert browser.find_element(By.ID, "hits").text == f"1 of {len(hits)}"
    box.clear()
    box.send_keys(Keys.SPACE, Keys.BACK_SPACE)
    assert browser.find_elements(By.CSS_SELECTOR, "main article.hit") == []
    assert "searching" not in browser.find_element(By.TAG_NAME, "body").get_attribute("class")
    assert severe_logs(browser) == []
