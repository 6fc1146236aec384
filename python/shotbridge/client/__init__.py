"""What a bus client needs: the bus client, finding or starting a host, the headless browser, local
pages."""
