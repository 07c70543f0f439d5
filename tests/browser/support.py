"""What the browser tests share: the browser (headless Chromium through Selenium, at a given width),
logging in, waiting, and what a page shows (console errors, sideways overflow, screenshots)."""

import json
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model

from ralphsite.tokens.services import api_token_create
from sessions_app.models import Session

PASSWORD = "console-pass-4821"


def _browser_paths() -> tuple[str, str] | None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (chromium, driver) if chromium and driver else None


def open_browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    paths = _browser_paths()
    if paths is None:
        message = "Chromium and chromedriver are needed: apt-get install chromium chromium-driver"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={request.param},1000", "--lang=en-US"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(paths[1]))
    driver.implicitly_wait(0)
    driver.width = request.param
    set_viewport(driver, request.param, 1000)
    yield driver
    driver.quit()


def set_viewport(driver: Any, width: int, height: int) -> None:
    """Lay the page out at this size: headless Chromium makes no window narrower than 500 px, so a
    `--window-size=400,…` page was laid out 500 px wide (and its screenshot cut at 400)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def log_in(browser: Any, live_server: Any) -> None:
    from selenium.webdriver.common.by import By

    get_user_model().objects.create_superuser("operator", "operator@example.com", PASSWORD)
    browser.get(f"{live_server.url}/admin/login/?next=/admin/")
    browser.find_element(By.NAME, "username").send_keys("operator")
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    # The path, not the whole URL: the login page's own URL ends with "?next=/admin/" too.
    wait_for(browser, lambda b: urlsplit(b.current_url).path == "/admin/")


def wait_for(browser: Any, condition: Any, seconds: float = 15) -> Any:
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # A live region replaces its elements when it refreshes, so an element found one moment can be gone
    # the next: that is the page working, and the condition is asked again on the next poll.
    return WebDriverWait(browser, seconds, poll_frequency=0.2,
                         ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)).until(condition)


def console_errors(browser: Any) -> list[dict[str, Any]]:
    return [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def attribute_values(browser: Any, selector: str, name: str) -> list[str]:
    """The attribute `name` of every element `selector` finds, in page order (one round trip)."""
    return browser.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((e) => e.getAttribute(arguments[1]));",
        selector, name)


def horizontal_overflow(browser: Any) -> int:
    # clientWidth, not innerWidth: the page's own scrollbar is not room for content.
    return browser.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth;")


def screenshot(browser: Any, name: str) -> None:
    folder = os.environ.get("RALPH_SCREENSHOTS")
    if folder:
        height = browser.execute_script("return document.documentElement.scrollHeight")
        set_viewport(browser, browser.width, min(height, 2400))
        Path(folder).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(folder) / f"{name}-{browser.width}.png"))


class Api:
    """The REST API over real HTTP, as an agent calls it: a token of the operator's scoped to one session."""

    def __init__(self, live_server: Any, session: Session) -> None:
        self.base = f"{live_server.url}/api/v1"
        self.secret = api_token_create(user=get_user_model().objects.get(username="operator"), scope="session",
                                       session_id=session.pk, label="browser test").secret

    def call(self, method: str, path: str, body: Any = None) -> Any:
        request = urllib.request.Request(self.base + path, method=method,
                                         data=None if body is None else json.dumps(body).encode(),
                                         headers={"Authorization": f"Token {self.secret}",
                                                  "Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            raise AssertionError(f"{method} {path}: {error.code} {error.read()[:500]!r}") from error
        return json.loads(raw) if raw else None

    def rows(self, path: str) -> list[dict[str, Any]]:
        return self.call("GET", path + ("&" if "?" in path else "?") + "page_size=500")["results"]


def api_append(live_server: Any, session: Session, **event: Any) -> None:
    Api(live_server, session).call("POST", "/events/", {"session": session.pk, **event})
