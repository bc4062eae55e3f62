"""What the tests share: fakes (DeepL, OpenAI, Label Studio, Ray), tiny models, fixtures."""
