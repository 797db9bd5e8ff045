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
