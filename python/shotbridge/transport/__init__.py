"""How the host and its clients reach each other: length-prefixed frames and where sockets live."""
