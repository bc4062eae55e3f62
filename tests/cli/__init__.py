"""The polyprobe command as a whole: conventions, messages, interrupts, OS errors."""
