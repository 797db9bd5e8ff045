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

/**
 * A bridge that answers by itself: the socket opens at once, `hello` gets a `welcome`, and every other
 * message goes to `respond(message, reply)`. `received` holds everything the client sent.
 * @param {any} FakeWebSocket a class from {@link fakeWebSocketClass}
 * @param {(m: any, reply: (answer: any) => void) => void} respond
 */
export function answeringSocketClass(FakeWebSocket, respond) {
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
      if (m.type === "hello") reply({ type: "welcome", protocol: 1, bridge: { version: "t" }, rulesets: [] });
      else respond(m, reply);
    }
  }
  return { Socket: AnsweringSocket, received };
}
