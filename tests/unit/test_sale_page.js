// SPDX-License-Identifier: BSD-3-Clause
// web/sale.js, the sale page, in a made-up browser (a fake DOM, sessionStorage and fetch) on a
// virtual clock, against a stand-in data plane whose purchase tokens live TTL ms: a buyer whose
// reserve is answered 200 with the order it holds (no receipt, docs/api.md) polls that order
// with purchase tokens, renewed as they expire, for the whole pay window. Minutes of the page's
// life run in a fraction of a second; the browser test (tests/e2e/test_page.sh) cannot wait
// that long. Prints TAP.
//
// usage: node test_sale_page.js web/sale.js
"use strict";
const fs = require("fs");
const vm = require("vm");

const SRC = fs.readFileSync(process.argv[2], "utf8");
const EV = 5, USER = 42, ORDER = 77;
let n = 0, failed = 0;
function ok(cond, desc, diag) {
	n++;
	if (!cond) failed++;
	console.log((cond ? "ok " : "not ok ") + n + " - " + desc);
	if (!cond && diag) console.log("# " + diag);
}

// A stand-in data plane: the user holds an order; its purchase tokens live ttl ms; the session
// is refused 401 from sessionEnds on (virtual ms). With skewed, the polls take every purchase
// token for expired (another data plane's clock); with soldOut, a reserve is answered 410
// before the user's result is looked at (docs/api.md's order of the checks).
function dataPlane(clock, ttl, sessionEnds, skewed, soldOut) {
	const dp = { tokens: 0, reserves: 0, polls: 0, lastPoll: 0, issued: new Map() };
	const deadline = clock.now + 3600000;
	const held = () => [200, { event: EV, status: "ordered", order_id: ORDER, pay_deadline: deadline,
		server_time: clock.now }];
	dp.answer = (method, path, h) => {
		const t = clock.now;
		if (path === "/api/v1/events/" + EV)
			return [200, { name: "sale", state: "open", starts_at: t - 1000, ends_at: t + 36e5,
				stock: 3, server_time: t }];
		if (path.endsWith("/token")) {
			dp.tokens++;
			if (t >= sessionEnds) return [401, { error: "invalid session" }];
			const tok = "p1.t" + dp.tokens;
			dp.issued.set(tok, t + ttl);
			return [200, { token: tok, reserve_path: "/api/v1/events/5/reserve/1-k", expires_at: t + ttl,
				server_time: t }];
		}
		const live = dp.issued.get(h["X-Flash-Token"]) > t;
		if (path.includes("/reserve/")) {
			dp.reserves++;
			if (soldOut) return [410, { error: "sold out" }];
			return live ? held() : [403, { error: "the purchase token expired: ask for a new one" }];
		}
		if (path.endsWith("/result")) {
			dp.polls++;
			dp.lastPoll = t;
			return live && !skewed ? held() :
				[403, { error: "the purchase token expired: poll with the receipt" }];
		}
		return [404, { error: "no such event" }];
	};
	return dp;
}

// The page in a fresh browser context (a reload: the same storage). Every state it shows is
// recorded with whether the order number was shown beside it.
function openPage(clock, dp, storage) {
	const els = {};
	const shown = [];
	const el = (id) => {
		if (els[id]) return els[id];
		const e = { id, hidden: false, textContent: "", value: 0, disabled: false, href: "",
			classList: { toggle() {} }, setAttribute() {}, addEventListener(ev, f) { e.onclick = f; } };
		e.dataset = id !== "sale" ? {} : new Proxy({}, { set(o, k, v) {
			o[k] = v;
			if (k === "state") shown.push(v);
			return true;
		} });
		return (els[id] = e);
	};
	const ctx = {
		window: { FLASHGATE: { event: String(EV), session: "s1." + USER + ".x", payUrl: "/pay/{order_id}" },
			FLASHGATE_TEXTS: { en: {} } },
		location: { search: "", origin: "https://shop.example" },
		URLSearchParams, navigator: { languages: ["en"] },
		document: { getElementById: el, querySelectorAll: () => [], documentElement: {}, cookie: "",
			title: "" },
		performance: { timeOrigin: 0, now: () => clock.now },
		sessionStorage: { getItem: (k) => storage.get(k) || null, setItem: (k, v) => storage.set(k, v) },
		setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout, setInterval: () => 0,
		AbortController: class { constructor() { this.signal = {}; } abort() {} },
		fetch: async (url, o) => {
			// A page that hammers the server (no pause between requests) never lets the virtual
			// clock run: past this many requests, they hang, so that the test ends and says so.
			if (dp.tokens + dp.reserves + dp.polls > 5000) await new Promise(() => {});
			const [status, body] = dp.answer(o.method, url, o.headers || {});
			return { status, json: async () => body, headers: { get: () => null } };
		},
		Worker: class { constructor() { throw new Error("no workers here"); } },
		Math, JSON, Date, Promise, String, Number, Object, Array, Infinity, parseInt, console,
	};
	ctx.window.window = ctx.window;
	vm.createContext(ctx);
	vm.runInContext(SRC, ctx);
	return { els: el, shown, sale: () => ctx.window.flashgateSale };
}

// A virtual clock: timers run in order of their time, each once the promises before it settled.
function virtualClock() {
	const c = { now: 1.8e12, timers: [], id: 0 };
	c.setTimeout = (f, ms) => {
		c.timers.push({ id: ++c.id, at: c.now + Math.max(0, ms || 0), f });
		return c.id;
	};
	c.clearTimeout = (id) => {
		c.timers = c.timers.filter((x) => x.id !== id);
	};
	const settle = async () => {
		for (let i = 0; i < 8; i++) await new Promise((r) => setImmediate(r));
	};
	c.runFor = async (ms, each) => {
		const end = c.now + ms;
		for (;;) {
			await settle();
			if (each) each();
			c.timers.sort((a, b) => a.at - b.at);
			if (!c.timers.length || c.timers[0].at > end) break;
			const x = c.timers.shift();
			c.now = Math.max(c.now, x.at);
			x.f();
		}
		c.now = end;
		await settle();
	};
	return c;
}

// Opens the page and clicks "Buy now" once the sale shows open.
async function clickBuy(clock, p) {
	await clock.runFor(2000);
	p.els("buy").onclick();
	await clock.runFor(1);
}

async function heldOrderLongerThanTenTokens(soldOut) {
	const how = soldOut ? " (sold out: the reserve answered 410, the result found with the token)" :
		" (the reserve answered 200 with it)";
	const clock = virtualClock();
	const dp = dataPlane(clock, 60000, Infinity, false, soldOut);
	const p = openPage(clock, dp, new Map());
	await clickBuy(clock, p);
	let hiddenAfter = 0, seenOrder = false;
	await clock.runFor(15 * 60000, () => {
		if (p.sale().state() === "ordered" && !p.els("order").hidden) seenOrder = true;
		else if (seenOrder && p.els("order").hidden) hiddenAfter++;
	});
	ok(p.sale().state() === "ordered" && !p.els("order").hidden,
		"an order held 15 min, polled with 1-min purchase tokens: still shown ordered" + how,
		"state " + p.sale().state() + ", status text " + p.els("status").textContent);
	ok(clock.now - dp.lastPoll < 10000, "... and still polled (the last poll " +
		Math.round((clock.now - dp.lastPoll) / 1000) + " s ago)");
	ok(dp.tokens >= 14 && dp.tokens <= 17, "... one purchase token a minute, no more (" +
		dp.tokens + " tokens, " + dp.reserves + " reserves)");
	const first = p.shown.indexOf("ordered");
	const after = p.shown.slice(first).filter((s) => s !== "ordered");
	ok(first >= 0 && after.length === 0 && hiddenAfter === 0,
		"... each token renewed with the order shown: no 'Getting your place' between",
		"states after the first ordered: " + [...new Set(after)].join(",") + "; order hidden " +
		hiddenAfter + " times");
}

async function tokenRefusedAtOnce() {
	const clock = virtualClock();
	const dp = dataPlane(clock, 60000, Infinity, true);
	const p = openPage(clock, dp, new Map());
	await clickBuy(clock, p);
	await clock.runFor(60000);
	ok(p.sale().state() === "error" && dp.tokens <= 11, "a poll that takes each new purchase token " +
		"for expired: not a renewal, the page gives up after 10 attempts (" + dp.tokens + " tokens)",
		"state " + p.sale().state());
}

async function loginExpiresWhileHolding() {
	const clock = virtualClock();
	const storage = new Map();
	const dp = dataPlane(clock, 60000, clock.now + 5 * 60000);
	const p = openPage(clock, dp, storage);
	await clickBuy(clock, p);
	await clock.runFor(7 * 60000);
	ok(p.sale().state() === "session_bad" && !p.els("order").hidden && !p.els("deadline").hidden &&
		p.els("buy").hidden, "the login expires while the order's token is renewed: 'log in " +
		"again' with the order and its deadline still shown, no buy button",
		"state " + p.sale().state() + ", order hidden " + p.els("order").hidden + ", buy hidden " +
		p.els("buy").hidden);
	const tokens = dp.tokens;
	await clock.runFor(5 * 60000);
	ok(dp.tokens === tokens, "... and nothing asked meanwhile (" + (dp.tokens - tokens) +
		" more token requests)");
	const dp2 = dataPlane(clock, 60000, Infinity);
	const q = openPage(clock, dp2, storage);
	await clock.runFor(10000);
	ok(q.sale().state() === "ordered" && !q.els("order").hidden && dp2.reserves >= 1,
		"logged in again, the reload resumes the order (not the sale's state and a button)",
		"state " + q.sale().state() + ", reserves " + dp2.reserves);
}

async function loginExpiredAtTheClick() {
	const clock = virtualClock();
	const storage = new Map();
	const dp = dataPlane(clock, 60000, clock.now);
	const p = openPage(clock, dp, storage);
	await clickBuy(clock, p);
	await clock.runFor(5000);
	ok(p.sale().state() === "session_bad", "a login expired at the click: 'log in again'",
		"state " + p.sale().state());
	const q = openPage(clock, dataPlane(clock, 60000, Infinity), storage);
	await clock.runFor(3000);
	ok(q.sale().state() === "open" && !q.sale().record().clicked,
		"... logged in again, the reload offers the button (the click forgotten)",
		"state " + q.sale().state());
}

(async () => {
	await heldOrderLongerThanTenTokens(false);
	await heldOrderLongerThanTenTokens(true);
	await tokenRefusedAtOnce();
	await loginExpiresWhileHolding();
	await loginExpiredAtTheClick();
	console.log("1.." + n);
	process.exit(failed ? 1 : 0);
})();
