import Prometheus

extension ServiceMetrics {
    /// 1 while `serve` is connected and subscribed to the MQTT broker, else 0.
    func recordMQTTConnected(_ connected: Bool) {
        registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "fencepost", metricName: "mqtt", unitName: "connected",
                helpText: "1 while connected and subscribed to the MQTT broker, else 0.")
        ).set(to: connected ? 1 : 0)
    }

    /// MQTT messages received and not yet acknowledged (their fixes not yet committed).
    func recordMQTTInFlight(_ messages: Int) {
        registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "fencepost", metricName: "mqtt_messages_in_flight", unitName: "messages",
                helpText: "MQTT messages received and not yet acknowledged (waiting for their commit).")
        ).set(to: Double(messages))
    }
}
