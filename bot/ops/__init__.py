"""Operations: settings from the environment, logging, heartbeats and the health report; above the search (health reads the index), below the shared parts and features that read settings and log."""
