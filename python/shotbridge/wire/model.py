"""The base of every wire model: unknown keys are ignored, fields fill by name or alias."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)
