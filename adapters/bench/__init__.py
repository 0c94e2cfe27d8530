"""Benchmarks and fakes of the outside world that the running bot never imports: `paperclub bench`, `tick-bench`, `slack bench`, and the fake Slack Web API the tests share; left out of the wheel."""
