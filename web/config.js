// SPDX-License-Identifier: BSD-3-Clause
// The shop's settings for its sale page (docs/page.md). Replace this file when deploying, or
// set window.FLASHGATE in the shop's own page before sale.js. Every field is optional; the
// query string may set event and lang too (?event=1&lang=zh).
window.FLASHGATE = Object.assign({
	event: 1, // the sale's event id
	api: "", // where flashgate answers: "" for the page's own origin (the edge proxies /api/)
	// session: "s1....",     // the user's session token, or a function returning it (or a
	//                        // promise of it); else the cookie named below is read
	sessionCookie: "flashgate_session",
	// lang: "zh",            // else ?lang=, else the browser's languages, else "en"
	// loginUrl: "/login",    // where "Log in" points
	// payUrl: "/pay?order={order_id}",  // where "Pay now" points
	// deviceId: "...",       // sent as X-Device-Id with the reserve
}, window.FLASHGATE || {});
