// A marked extension that changes nothing: pi's TUI registers it, the session tests never render.
export default function markedCjkFriendly() {
  return {};
}
