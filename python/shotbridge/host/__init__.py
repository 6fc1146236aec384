"""The native-messaging host: started by Chromium, it owns the bus and every client's session."""
