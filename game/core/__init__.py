"""What every way of playing runs on: the session, the fixed-step loop, stop signals,
tick timings and the garbage-collector watch. No pygame here."""
