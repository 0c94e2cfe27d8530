"""Operations: settings from the environment, logging, heartbeats and the health report. settings and logs import only store, so every layer may import them."""
