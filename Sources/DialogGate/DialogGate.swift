// DialogGate
