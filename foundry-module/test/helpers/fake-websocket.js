/** A scripted WebSocket: records what the client sends; the test plays the bridge. */
export function fakeWebSocketClass() {
  const sockets = [];
  class FakeWebSocket {
    constructor(url) {
      this.url = url;
      this.sent = [];
      this.readyState = 0;
      this.closedWith = null;
      sockets.push(this);
    }
    send(text) {
      this.sent.push(JSON.parse(text));
    }
    close(code = 1000, reason = "") {
      this.closedWith = { code, reason };
      this.readyState = 3;
    }
    // Test side: the bridge's actions.
    open() {
      this.readyState = 1;
      this.onopen?.({});
    }
    receive(msg) {
      this.onmessage?.({ data: JSON.stringify(msg) });
    }
    drop(code = 1006, reason = "") {
      this.readyState = 3;
      this.onclose?.({ code, reason });
    }
  }
  return { FakeWebSocket, sockets };
}

/** What the fake bridges answer to `hello` unless told otherwise. */
export const WELCOME = { type: "welcome", protocol: 1, bridge: { version: "t" }, rulesets: [] };

/**
 * A bridge that answers by itself: the socket opens at once, `hello` gets `hello(message)` (a `welcome` unless
 * given), and every other message goes to `respond(message, reply)`. `received` holds everything the client sent.
 * @param {any} FakeWebSocket a class from {@link fakeWebSocketClass}
 * @param {(m: any, reply: (answer: any) => void) => void} respond
 * @param {{hello?: (m: any) => any}} [opts]
 */
export function answeringSocketClass(FakeWebSocket, respond, { hello = () => WELCOME } = {}) {
  const received = [];
  class AnsweringSocket extends FakeWebSocket {
    constructor(url) {
      super(url);
      queueMicrotask(() => this.open());
    }
    send(text) {
      super.send(text);
      const m = JSON.parse(text);
      received.push(m);
      const reply = (a) => queueMicrotask(() => this.receive(a));
      if (m.type === "hello") reply(hello(m));
      else respond(m, reply);
    }
  }
  return { Socket: AnsweringSocket, received };
}
