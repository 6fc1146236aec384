"""Putting shotbridge on a machine: native-host registration, browser profiles, doctor, user
settings."""
