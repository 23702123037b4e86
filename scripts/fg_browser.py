# SPDX-License-Identifier: BSD-3-Clause
"""A headless Chromium showing flashgate's sale page, driven by Selenium (Debian's chromium,
chromium-driver and python3-selenium). Used by the browser test (tests/e2e/test_page.sh) and by
scripts/demo's browser buyer (scripts/demo-browser.py).

    b = Browser("buyer1", shots="/tmp/shots", spki=open("edge.spki").read())
    b.open("https://198.18.0.1:8443/", session="s1....")
    b.wait_state({"open"}, 20); b.click_buy(); b.shot("clicked")
    b.quit()

What a buyer sees is read from the page itself: the state it shows (data-state of <main>), the
text of its live region, the button; `record()` is what the page stored to resume after a reload.
`csp_violations()` lists what the browser's console said about the Content-Security-Policy
(a blocked script, style, connection or worker), kept across calls.
"""

import os
import time

from selenium import webdriver
from selenium.common.exceptions import ElementNotInteractableException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PHONE = (412, 915)  # a phone-width screen, CSS pixels


class Browser:
    def __init__(self, name, shots, spki=None, size=PHONE, lang="en"):
        self.name = name
        self.shots = shots
        self.n_shots = 0
        os.makedirs(shots, exist_ok=True)
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--no-first-run", "--disable-extensions", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                  "--window-size=%d,%d" % size, "--lang=" + lang):
            opts.add_argument(a)
        # The console's messages, for the Content-Security-Policy violations it reports.
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.console = []
        self.gone = False  # quit: its console was read for the last time
        if spki:
            # Trust the edge's own certificate by its key, as a browser trusts a real CA.
            opts.add_argument("--ignore-certificate-errors-spki-list=" + spki.strip())
        self.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER),
                                       options=opts)
        # Headless windows are at least 500 pixels wide: the phone's width is emulated.
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": 1,
            "mobile": size[0] < 600})
        self.driver.set_page_load_timeout(30)
        self.driver.set_script_timeout(10)

    def open(self, url, session=None, cookie="flashgate_session"):
        """Loads url; with session, the shop's login cookie is set first (docs/page.md)."""
        if session:
            self.driver.execute_cdp_cmd("Network.enable", {})
            self.driver.execute_cdp_cmd("Network.setCookie", {
                "url": url, "name": cookie, "value": session, "secure": True,
                "sameSite": "Strict"})
        self.driver.get(url)

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def state(self):
        """The state the page shows (docs/page.md), or None before it runs."""
        try:
            return self.js("var m = document.getElementById('sale');"
                           "return m ? m.getAttribute('data-state') : null;")
        except WebDriverException:
            return None

    def status(self):
        return self.driver.find_element(By.ID, "status").text

    def text(self, elem_id):
        return self.driver.find_element(By.ID, elem_id).text

    def shown(self, elem_id):
        return self.driver.find_element(By.ID, elem_id).is_displayed()

    def button_enabled(self):
        return self.driver.find_element(By.ID, "buy").is_enabled()

    def click_buy(self):
        """A person's click (Selenium's): on a disabled button it does nothing, as for them.
        Returns False when there was nothing to click (the button is hidden once the buyer has
        a result)."""
        try:
            self.driver.find_element(By.ID, "buy").click()
            return True
        except ElementNotInteractableException:
            return False

    def press_buy(self):
        """The keyboard's way: Tab until the button has the focus, then Enter. Returns whether
        the focus reached it."""
        body = self.driver.find_element(By.TAG_NAME, "body")
        body.click()
        for _ in range(10):
            ActionChains(self.driver).send_keys(Keys.TAB).perform()
            if self.js("return document.activeElement && document.activeElement.id;") == "buy":
                ActionChains(self.driver).send_keys(Keys.ENTER).perform()
                return True
        return False

    def record(self):
        """What the page stored for this buyer (purchase token, receipt, last result)."""
        return self.js("return window.flashgateSale ? window.flashgateSale.record() : null;")

    def server_now(self):
        return self.js("return window.flashgateSale.serverNow();")

    def wait(self, cond, timeout, step=0.1):
        """Calls cond() until it returns something true or timeout seconds pass; returns it."""
        end = time.monotonic() + timeout
        while True:
            v = cond()
            if v or time.monotonic() >= end:
                return v
            time.sleep(step)

    def wait_state(self, states, timeout):
        """Waits until the page shows one of states; returns the state shown last."""
        self.wait(lambda: self.state() in states, timeout)
        return self.state()

    def shot(self, label):
        """Saves a screenshot as NN-NAME-LABEL.png in the shots folder; returns its path."""
        self.n_shots += 1
        path = os.path.join(self.shots, "%s-%02d-%s.png" % (self.name, self.n_shots, label))
        self.driver.save_screenshot(path)
        return path

    def reload(self):
        self.driver.refresh()

    def csp_violations(self):
        """The console messages so far that report a Content-Security-Policy violation."""
        if not self.gone:
            try:
                self.console += [e.get("message", "") for e in self.driver.get_log("browser")]
            except Exception:  # noqa: BLE001 (a browser that died: what it said so far)
                pass
        return [m for m in self.console if "Content Security Policy" in m or
                "Content-Security-Policy" in m]

    def quit(self):
        self.csp_violations()  # what the console said, before it goes
        self.gone = True
        try:
            self.driver.quit()
        except WebDriverException:
            pass
